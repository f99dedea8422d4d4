"""The copies on shadow columns are made from the catalog's own definitions: columns are
renamed where they are columns, and nowhere else."""

from __future__ import annotations

from django_snowid.adopt.pg_catalog import Built
from django_snowid.adopt.shadows import attach_sql, create_sql, rename_columns, same_definition

RENAMES = {"parent_id": '"parent_id_snowid"', "Parent": '"Parent_snowid"'}


def test_columns_are_renamed_and_nothing_else():
    text = (
        "((parent_id + 1)) WHERE ((label <> 'parent_id'::text) AND (parent_id > 0)) "
        'INCLUDE ("Parent") public.parent_id parent_id(x) label COLLATE "Parent"'
    )
    assert rename_columns(text, RENAMES) == (
        "((\"parent_id_snowid\" + 1)) WHERE ((label <> 'parent_id'::text) AND "
        '("parent_id_snowid" > 0)) INCLUDE ("Parent_snowid") public.parent_id parent_id(x) '
        'label COLLATE "Parent"'
    )


def test_an_integer_operator_class_after_a_renamed_column_becomes_bigint_s():
    assert rename_columns("(parent_id int4_ops, other int4_ops)", RENAMES) == (
        '("parent_id_snowid" int8_ops, other int4_ops)'
    )


def test_an_index_copy_and_its_check():
    index = Built(
        "index",
        "report",
        "report_desc",
        'CREATE INDEX report_desc ON public.report USING btree ("Parent" DESC NULLS LAST, '
        "label COLLATE \"C\" text_pattern_ops) WHERE (label <> ''::text)",
    )
    assert create_sql(index, ["Parent"], []) == (
        'CREATE INDEX CONCURRENTLY "report_desc_snowid" ON public.report USING btree '
        '("Parent_snowid" DESC NULLS LAST, label COLLATE "C" text_pattern_ops) '
        "WHERE (label <> ''::text)"
    )
    copy = (
        'CREATE INDEX report_desc_snowid ON public.report USING btree ("Parent_snowid" DESC '
        "NULLS LAST, label COLLATE \"C\" text_pattern_ops) WHERE (label <> ''::text)"
    )
    back = {"Parent_snowid": '"Parent"'}
    assert same_definition(index, copy, lambda text: rename_columns(text, back))
    assert not same_definition(
        index, copy.replace("DESC NULLS LAST", "ASC"), lambda text: rename_columns(text, back)
    )
    assert attach_sql(index) == 'ALTER INDEX "report_desc_snowid" RENAME TO "report_desc"'


def test_a_foreign_key_copy_renames_both_sides_and_keeps_its_actions():
    key = Built(
        "foreign key",
        "report",
        "report_parent_fkey",
        "FOREIGN KEY (parent_id) REFERENCES shelf(id) ON UPDATE RESTRICT ON DELETE CASCADE "
        "DEFERRABLE NOT VALID",
        target="shelf",
    )
    assert create_sql(key, ["parent_id"], ["id"]) == (
        'ALTER TABLE "report" ADD CONSTRAINT "report_parent_fkey_snowid" FOREIGN KEY '
        '("parent_id_snowid") REFERENCES shelf("id_snowid") ON UPDATE RESTRICT '
        "ON DELETE CASCADE DEFERRABLE NOT VALID"
    )
