"""``snowid_adopt`` on PostgreSQL keeps what the database holds beyond the models: a table
no model describes (mixed case) pointing at the key with ``ON DELETE CASCADE``, a check,
a unique index with ``INCLUDE``, a partial unique index, a ``DESC`` index with a collation
and an operator class, an exclusion constraint, a deferrable unique constraint, a key that
deletes in the database (Django 6.1's ``DB_CASCADE``, else one a DBA made), a mixed-case
``db_table``, and an identity restarted below the largest id. The catalog read before and
after is the same (integer -> bigint aside), online and by the plain migration; a dependent
view is refused; a write of a replication subscriber during the backfill is kept, and one
made with the copying trigger off is found before the swap."""

from __future__ import annotations

import json
import re

import pytest
from django.db import models

from tests.adopt.test_adopt import POPULATE, check_adopted, pairs
from tests.adopt_project import AdoptProject, backend

# The catalog tests share one adopted project (the module-scoped fixture).
pytestmark = [pytest.mark.django_db, pytest.mark.slow, pytest.mark.xdist_group("adopt-catalog")]

# What a DBA added over the years.
DBA = [
    "CREATE EXTENSION IF NOT EXISTS btree_gist",
    'CREATE TABLE "LegacyReport" (id serial PRIMARY KEY, "Parent_id" integer NOT NULL '
    "REFERENCES adoptapp_shelf (id) ON DELETE CASCADE ON UPDATE RESTRICT DEFERRABLE, "
    "label text NOT NULL, during tstzrange NOT NULL DEFAULT tstzrange(now(), NULL), "
    'CONSTRAINT "Report_positive" CHECK ("Parent_id" > 0), '
    'CONSTRAINT report_overlap EXCLUDE USING gist ("Parent_id" WITH =, during WITH &&), '
    'CONSTRAINT report_deferred UNIQUE ("Parent_id", label) DEFERRABLE INITIALLY DEFERRED)',
    'COMMENT ON COLUMN "LegacyReport"."Parent_id" IS \'the shelf reported on\'',
    'INSERT INTO "LegacyReport" ("Parent_id", label) SELECT id, \'r\' || id FROM adoptapp_shelf',
    'CREATE UNIQUE INDEX report_include ON "LegacyReport" ("Parent_id") INCLUDE (label)',
    'CREATE UNIQUE INDEX report_partial ON "LegacyReport" ("Parent_id") WHERE label <> \'\'',
    'CREATE INDEX report_desc ON "LegacyReport" '
    '("Parent_id" DESC NULLS LAST, label COLLATE "C" text_pattern_ops)',
    "ALTER TABLE adoptapp_book ADD CONSTRAINT book_on_a_shelf CHECK (shelf_id > 0)",
    # Django's key of Book, made to delete in the database by hand.
    "DO $$ DECLARE name text; BEGIN SELECT conname INTO name FROM pg_constraint "
    "WHERE conrelid = 'adoptapp_book'::regclass AND contype = 'f'; "
    "EXECUTE format('ALTER TABLE adoptapp_book DROP CONSTRAINT %I', name); "
    "EXECUTE format('ALTER TABLE adoptapp_book ADD CONSTRAINT %I FOREIGN KEY (shelf_id) "
    "REFERENCES adoptapp_shelf (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED', name); "
    "END $$",
    'INSERT INTO "Adopt_Crate" (shelf_id) SELECT id FROM adoptapp_shelf',
    "ALTER TABLE adoptapp_shelf ALTER COLUMN id RESTART WITH 2",
]

# Every constraint, index and column of the schema: the test's own reading of the catalog.
CATALOG = """
import json
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute('''
        SELECT 'constraint ' || cl.relname || '.' || c.conname, pg_get_constraintdef(c.oid)
        FROM pg_constraint c JOIN pg_class cl ON cl.oid = c.conrelid
        WHERE cl.relnamespace = 'public'::regnamespace
        UNION ALL
        SELECT 'index ' || cl.relname || '.' || ic.relname, pg_get_indexdef(i.indexrelid)
        FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
        JOIN pg_class cl ON cl.oid = i.indrelid WHERE cl.relnamespace = 'public'::regnamespace
        UNION ALL
        SELECT 'column ' || cl.relname || '.' || a.attname, concat_ws('|',
            format_type(a.atttypid, a.atttypmod), a.attnotnull,
            pg_get_expr(d.adbin, d.adrelid), a.attidentity, col_description(cl.oid, a.attnum))
        FROM pg_attribute a JOIN pg_class cl ON cl.oid = a.attrelid
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE cl.relnamespace = 'public'::regnamespace AND cl.relkind = 'r'
          AND a.attnum > 0 AND NOT a.attisdropped
        UNION ALL
        SELECT 'view ' || viewname, '' FROM pg_views WHERE schemaname = 'public'
    ''')
    print('CATALOG', json.dumps(dict(cursor.fetchall())))
"""


def catalog(project: AdoptProject, *, plain: bool) -> dict[str, str]:
    """The schema's catalog, integer -> bigint aside (and the adopted key's identity,
    which the plain migration drops)."""
    found = json.loads(project.shell(CATALOG).split("CATALOG ", 1)[1])
    kept = {}
    for key, value in found.items():
        if key.startswith(("constraint django_", "index django_", "column django_")):
            continue  # the journal and the migration records
        value = re.sub(r"^(integer|bigint)\|", "int|", value)
        if plain and key == "column adoptapp_shelf.id":
            value = value.split("|")[0]
        kept[key] = value
    return kept


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """The project with its rows and what the DBA added: made once, copied by each test."""
    if backend() != "postgresql":
        pytest.skip("the catalog of PostgreSQL")
    project = AdoptProject(tmp_path_factory.mktemp("prepared"), crates=True)
    project.ok("migrate", "-v", "0")
    project.shell(POPULATE.format(rows=8))
    project.sql(DBA)
    yield project
    project.drop()


@pytest.fixture
def legacy(prepared, tmp_path):
    project = prepared.clone(tmp_path)
    yield project
    project.drop()


# The online switch, in process: during the backfill of adoptapp_book a subscriber-style
# write (session_replication_role = replica), and a write with the copying trigger off.
ONLINE = """
import json
from django.db import connection, transaction
from django_snowid.adopt.run import current_plan, execute
from django_snowid.exceptions import AdoptionError
written = {}
def meanwhile(table, done, total):
    if table != 'adoptapp_book' or written:
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute('SELECT id FROM adoptapp_book ORDER BY id LIMIT 2')  # copied already
        (first,), (second,) = cursor.fetchall()
        cursor.execute('SELECT max(id) FROM adoptapp_shelf')
        shelf = cursor.fetchone()[0]
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute('UPDATE adoptapp_book SET shelf_id = %s WHERE id = %s', [shelf, first])
        cursor.execute("INSERT INTO adoptapp_book (shelf_id, title) VALUES (%s, 'r') "
                       "RETURNING id", [shelf])
        written.update(replica=[first, cursor.fetchone()[0]], shelf=shelf)
    with connection.cursor() as cursor:  # autocommit: three transactions
        cursor.execute('ALTER TABLE adoptapp_book DISABLE TRIGGER USER')
        cursor.execute('UPDATE adoptapp_book SET shelf_id = %s WHERE id = %s', [shelf, second])
        cursor.execute('ALTER TABLE adoptapp_book ENABLE ALWAYS TRIGGER '
                       'snowid_adopt_adoptapp_book_snowid')
        written.update(untriggered=second)
def run():
    plan, _ = current_plan('adoptapp.Shelf', using='default', keep_sequence=True, batch_size=3)
    execute('adoptapp.Shelf', plan, using='default', batch_size=3, throttle=0,
            lock_timeout_ms=500, out=print, progress=meanwhile)
try:
    run()
except AdoptionError as exc:
    print('REFUSED', exc)
run()
print('WRITTEN', json.dumps(written))
"""

BOOKS = """
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute('SELECT id, shelf_id FROM adoptapp_book WHERE id = ANY(%s) ORDER BY id', [{ids}])
    print('BOOKS', cursor.fetchall())
"""


WIDENED = """
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute('SELECT DISTINCT data_type FROM information_schema.columns WHERE '
                   "(table_name, column_name) IN (('LegacyReport', 'Parent_id'), "
                   "('Adopt_Crate', 'shelf_id'), ('adoptapp_book', 'shelf_id'), "
                   "('adoptapp_shelf', 'id'))")
    print('TYPES', sorted(t for (t,) in cursor.fetchall()))
"""


def deletes_in_the_database(project: AdoptProject) -> None:
    """Deleting a shelf in SQL deletes its report, book and crate (ON DELETE CASCADE)."""
    shelf = "(SELECT min(shelf_id) FROM adoptapp_book)"
    counts = (
        'SELECT (SELECT count(*) FROM "LegacyReport"), (SELECT count(*) FROM adoptapp_book), '
        '(SELECT count(*) FROM "Adopt_Crate")'
    )
    before = project.sql([counts])
    database_cascade = hasattr(models, "DB_CASCADE")  # Django 6.1: Crate's key too
    after = project.sql(
        [
            *([] if database_cascade else [f'DELETE FROM "Adopt_Crate" WHERE shelf_id = {shelf}']),
            "DELETE FROM adoptapp_shelflabel WHERE shelf_id = " + shelf,
            "DELETE FROM adoptapp_reader_shelves WHERE shelf_id = " + shelf,
            "DELETE FROM adoptapp_shelf WHERE id = " + shelf,
            counts,
        ]
    )
    reports, books, crates = map(int, re.findall(r"\d+", before))
    gone = [int(n) for n in re.findall(r"\d+", after)]
    assert gone == [reports - 1, books - 1, crates - 1], (before, after)


def test_a_dependent_view_and_a_narrow_relation_of_the_project_are_refused(legacy):
    """A view on a converted column and a project's 32-bit relation are refused by name.

    Slow: each command a Django process of its own."""
    legacy.sql(["CREATE VIEW shelf_books AS SELECT b.id, b.shelf_id FROM adoptapp_book b"])
    plan = legacy.ok("snowid_adopt", "adoptapp.Shelf")
    assert "Cannot be done yet: The view shelf_books depends on adoptapp_book.shelf_id" in plan
    refused = legacy.manage("snowid_adopt", "adoptapp.Shelf", "--execute")
    assert refused.returncode == 1 and "view shelf_books depends on" in refused.stderr
    assert "Traceback" not in refused.stderr
    legacy.sql(["DROP VIEW shelf_books"])
    legacy.env["SNOWID_ADOPT_NARROW_NOTES"] = "1"  # the project's own generic relation
    narrow = legacy.ok("snowid_adopt", "adoptapp.Shelf")
    (note,) = [line for line in narrow.splitlines() if "adoptapp.Note.object_id" in line]
    assert note.startswith("Cannot be done yet:") and "holds 8 ids of adoptapp.Shelf" in note
    assert note.endswith(
        "make it a PositiveBigIntegerField in the code: the switch then widens its column too."
    )


def test_the_online_switch_keeps_the_catalog(legacy):
    """Slow: the online switch's every step, each command a Django process of its own."""
    plan = legacy.ok("snowid_adopt", "adoptapp.Shelf")
    for column in (
        "LegacyReport.Parent_id  foreign key (database only)  integer -> bigint",
        "Adopt_Crate.shelf_id  foreign key  integer -> bigint",
    ):
        assert column in plan, plan
    steps = [line.split(". ", 1)[1] for line in plan.splitlines() if re.match(r"\s+\d+\. ", line)]
    assert len(steps) == len(set(steps)), plan
    assert "add bigint shadow columns of adoptapp_book.shelf_id" in plan
    assert "exclusion constraint report_overlap is built again under the lock" in plan
    before, rows = catalog(legacy, plain=False), pairs(legacy)

    out = legacy.shell(ONLINE)
    assert "REFUSED 1 rows of adoptapp_book differ from their shadow columns" in out, out
    assert "done; ids below" in out
    assert catalog(legacy, plain=False) == before
    assert "TYPES ['bigint']" in legacy.shell(WIDENED)
    written = json.loads(out.split("WRITTEN ", 1)[1])
    ids = [*written["replica"], written["untriggered"]]
    books = legacy.shell(BOOKS.format(ids=ids)).split("BOOKS ", 1)[1]
    assert books.strip() == str([(i, written["shelf"]) for i in sorted(ids)])
    changed = {book for book, _ in rows["adoptapp_book"]} & set(ids)
    for table, old in rows.items():
        now = {tuple(p) for p in pairs(legacy)[table]}
        kept = {tuple(p) for p in old if table != "adoptapp_book" or p[0] not in changed}
        assert kept <= now, table
    # The identity (kept) continues above the largest id, not at 2.
    largest = int(re.findall(r"\d+", legacy.sql(["SELECT max(id) FROM adoptapp_shelf"]))[0])
    inserted = legacy.sql(["INSERT INTO adoptapp_shelf (name) VALUES ('old code') RETURNING id"])
    assert int(re.findall(r"\d+", inserted)[0]) > largest
    deletes_in_the_database(legacy)
    check_adopted(legacy)


def test_the_plain_migration_keeps_the_catalog(legacy):
    """The plain migration leaves the catalog as it was, integer -> bigint aside.

    Slow: each command a Django process of its own."""
    before, rows = catalog(legacy, plain=True), pairs(legacy)
    out = legacy.ok("snowid_adopt", "adoptapp.Shelf", "--execute", "--plain")
    assert "done; ids below" in out
    assert catalog(legacy, plain=True) == before
    assert "TYPES ['bigint']" in legacy.shell(WIDENED)
    assert pairs(legacy) == rows
    deletes_in_the_database(legacy)
    check_adopted(legacy)


# MariaDB/MySQL: a table no model describes, and Django's key of Book made to delete in
# the database by hand.
MARIADB_DBA = [
    "CREATE TABLE `LegacyReport` (id integer AUTO_INCREMENT PRIMARY KEY, "
    "`Parent_id` integer NOT NULL COMMENT 'the shelf reported on', label varchar(20), "
    "CONSTRAINT report_parent FOREIGN KEY (`Parent_id`) REFERENCES adoptapp_shelf (id) "
    "ON DELETE CASCADE, CONSTRAINT report_positive CHECK (`Parent_id` > 0))",
    "INSERT INTO `LegacyReport` (`Parent_id`, label) SELECT id, 'r' FROM adoptapp_shelf",
]

MARIADB_CATALOG = """
import json
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("SELECT CONCAT_WS(' ', 'key', TABLE_NAME, CONSTRAINT_NAME), "
                   "CONCAT_WS(' ', UPDATE_RULE, DELETE_RULE, REFERENCED_TABLE_NAME) "
                   "FROM information_schema.REFERENTIAL_CONSTRAINTS "
                   "WHERE CONSTRAINT_SCHEMA = DATABASE() "
                   "UNION ALL SELECT CONCAT_WS(' ', 'column', TABLE_NAME, COLUMN_NAME), "
                   "CONCAT_WS('|', REGEXP_REPLACE(COLUMN_TYPE, '^(big)?int[(][0-9]+[)]', 'int'), "
                   "IS_NULLABLE, COLUMN_COMMENT) FROM information_schema.COLUMNS "
                   "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME NOT LIKE 'django%%' "
                   "UNION ALL SELECT CONCAT_WS(' ', 'check', TABLE_NAME, CONSTRAINT_NAME), "
                   "CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS "
                   "WHERE CONSTRAINT_SCHEMA = DATABASE()")
    print('CATALOG', json.dumps(dict(cursor.fetchall())))
"""


def mariadb_catalog(project: AdoptProject) -> dict[str, str]:
    """The catalog, but the check that Django's AlterField of Note.object_id renames."""
    found = json.loads(project.shell(MARIADB_CATALOG).split("CATALOG ", 1)[1])
    return {k: v for k, v in found.items() if not k.startswith("check adoptapp_note ")}


def test_the_plain_migration_keeps_mariadbs_keys(tmp_path):
    """MariaDB's plain migration keeps every foreign key of the converted columns.

    Slow: a project made and migrated, each command a Django process of its own."""
    if backend() != "mysql":
        pytest.skip("MariaDB/MySQL's foreign keys")
    project = AdoptProject(tmp_path)
    try:
        project.ok("migrate", "-v", "0")
        project.shell(POPULATE.format(rows=4))
        project.sql(MARIADB_DBA)
        before, rows = mariadb_catalog(project), pairs(project)
        plan = project.ok("snowid_adopt", "adoptapp.Shelf")
        assert "LegacyReport.Parent_id  foreign key (database only)  int -> bigint" in plan
        assert "done; ids below" in project.ok("snowid_adopt", "adoptapp.Shelf", "--execute")
        after = mariadb_catalog(project)
        assert {k: (v, after.get(k)) for k, v in before.items() if after.get(k) != v} == {}
        assert after == before
        assert pairs(project) == rows
        types = project.sql(
            [
                "SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
                "AND TABLE_NAME = 'LegacyReport' AND COLUMN_NAME = 'Parent_id'"
            ]
        )
        assert "bigint" in types
        counts = "SELECT COUNT(*) FROM `LegacyReport`"
        reports = int(re.findall(r"\d+", project.sql([counts]))[0])
        shelf = (
            "(SELECT MIN(id) FROM adoptapp_shelf "
            "WHERE id NOT IN (SELECT shelf_ptr_id FROM adoptapp_displayshelf))"
        )
        project.sql(
            [
                f"SET @shelf = {shelf}",
                "DELETE FROM adoptapp_book WHERE shelf_id = @shelf",
                "DELETE FROM adoptapp_shelflabel WHERE shelf_id = @shelf",
                "DELETE FROM adoptapp_reader_shelves WHERE shelf_id = @shelf",
                "DELETE FROM adoptapp_shelf WHERE id = @shelf",
            ]
        )
        assert int(re.findall(r"\d+", project.sql([counts]))[0]) == reports - 1
        check_adopted(project)
    finally:
        project.drop()
