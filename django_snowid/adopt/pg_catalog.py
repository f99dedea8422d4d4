"""What PostgreSQL's catalog holds on the columns a switch converts: indexes, constraints
(as ``pg_get_indexdef``/``pg_get_constraintdef`` write them), keys from any table, and
what else depends on them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .schema import fetch_all

__all__ = [
    "Built",
    "Reference",
    "built_objects",
    "dependents",
    "q",
    "references",
    "table_state",
]

#: What a switch makes again itself; anything else depending on a column is refused.
HANDLED = ("pg_class", "pg_constraint", "pg_attrdef")


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class Reference:
    """A foreign key column pointing at a column of another (or the same) table."""

    constraint: str
    table: str
    column: str
    target: str
    target_column: str


def references(connection: Any, names: list[str]) -> list[Reference]:
    """Every foreign key column, of any table, pointing at a column of ``names``."""
    found = fetch_all(
        connection,
        """
        SELECT c.conname, cl.relname, a.attname, rc.relname, ra.attname
        FROM pg_constraint c
        JOIN pg_class cl ON cl.oid = c.conrelid
        JOIN pg_class rc ON rc.oid = c.confrelid
        CROSS JOIN LATERAL unnest(c.conkey, c.confkey) AS k(here, there)
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.here
        JOIN pg_attribute ra ON ra.attrelid = c.confrelid AND ra.attnum = k.there
        WHERE c.contype = 'f' AND c.confrelid = ANY(%s::regclass[])
        ORDER BY cl.relname, c.conname, a.attname
        """,
        [[q(n) for n in names]],
    )
    return [Reference(*map(str, row)) for row in found]


def _attnums(connection: Any, table: str, columns: Iterable[str]) -> list[int]:
    found = fetch_all(
        connection,
        "SELECT attnum FROM pg_attribute WHERE attrelid = %s::regclass AND attname = ANY(%s) "
        "AND NOT attisdropped",
        [q(table), list(columns)],
    )
    return [int(n) for (n,) in found]


def dependents(connection: Any, table: str, columns: Iterable[str]) -> list[str]:
    """What depends on ``columns`` of ``table`` that a switch cannot make again (views,
    generated columns, policies, column triggers...), described."""
    found = fetch_all(
        connection,
        """
        SELECT DISTINCT CASE WHEN r.oid IS NULL THEN pg_describe_object(d.classid, d.objid, 0)
               ELSE pg_describe_object('pg_class'::regclass, r.ev_class, 0) END,
               d.classid::regclass::text, COALESCE(ad.adnum = d.refobjsubid, false)
        FROM pg_depend d
        LEFT JOIN pg_attrdef ad ON d.classid = 'pg_attrdef'::regclass AND ad.oid = d.objid
        LEFT JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass AND r.oid = d.objid
        WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = %s::regclass
          AND d.refobjsubid = ANY(%s) AND d.deptype IN ('n', 'a')
        ORDER BY 1
        """,
        [q(table), _attnums(connection, table, columns)],
    )
    return [
        str(what)
        for what, kind, own in found
        if kind not in HANDLED or (kind == "pg_attrdef" and not own)
    ]


@dataclass(frozen=True)
class Built:
    """An index or constraint involving a converted column, as the catalog defines it."""

    kind: str  # index, unique, primary key, exclusion, foreign key, check
    table: str  # the table it belongs to
    name: str
    definition: str  # pg_get_indexdef (indexes, unique, primary key) or pg_get_constraintdef
    target: str = ""  # a foreign key's referenced table
    timing: str = ""  # " DEFERRABLE" / " DEFERRABLE INITIALLY DEFERRED" of a unique/primary key
    validated: bool = True
    clustered: bool = False


_KINDS = {"p": "primary key", "u": "unique", "x": "exclusion", "f": "foreign key", "c": "check"}


def _timing(deferrable: bool, deferred: bool) -> str:
    if deferred:
        return " DEFERRABLE INITIALLY DEFERRED"
    return " DEFERRABLE" if deferrable else ""


def _indexes(connection: Any, table: str, attnums: list[int]) -> list[Built]:
    found = fetch_all(
        connection,
        """
        SELECT ic.relname, pg_get_indexdef(i.indexrelid), COALESCE(con.contype, ''),
               COALESCE(con.condeferrable, false), COALESCE(con.condeferred, false),
               i.indisclustered
        FROM pg_index i
        JOIN pg_class ic ON ic.oid = i.indexrelid
        LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid
             AND con.conrelid = i.indrelid AND con.contype IN ('p', 'u', 'x')
        WHERE i.indrelid = %s::regclass AND (i.indkey::int2[] && %s::int2[] OR EXISTS (
            SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
            AND d.objid = i.indexrelid AND d.refobjid = i.indrelid
            AND d.refobjsubid = ANY(%s)))
        ORDER BY ic.relname
        """,
        [q(table), attnums, attnums],
    )
    return [
        Built(
            kind=_KINDS.get(contype, "index"),
            table=table,
            name=str(name),
            definition=str(definition),
            timing=_timing(deferrable, deferred),
            clustered=bool(clustered),
        )
        for name, definition, contype, deferrable, deferred, clustered in found
        if contype != "x"  # rebuilt with its constraint
    ]


def _constraints(connection: Any, table: str, attnums: list[int]) -> list[Built]:
    """Keys, checks and exclusion constraints on ``attnums``, and keys pointing at them."""
    found = fetch_all(
        connection,
        """
        SELECT c.contype, cl.relname, c.conname, pg_get_constraintdef(c.oid),
               COALESCE(rc.relname, ''), c.convalidated
        FROM pg_constraint c
        JOIN pg_class cl ON cl.oid = c.conrelid
        LEFT JOIN pg_class rc ON rc.oid = c.confrelid
        WHERE c.contype IN ('f', 'c', 'x') AND (
            (c.conrelid = %s::regclass AND c.conkey && %s::int2[])
            OR (c.contype = 'f' AND c.confrelid = %s::regclass AND c.confkey && %s::int2[]))
        ORDER BY cl.relname, c.conname
        """,
        [q(table), attnums, q(table), attnums],
    )
    return [
        Built(
            kind=_KINDS[contype],
            table=str(owner),
            name=str(name),
            definition=str(definition),
            target=str(target),
            validated=bool(validated),
        )
        for contype, owner, name, definition, target, validated in found
    ]


def built_objects(connection: Any, columns: dict[str, list[str]]) -> list[Built]:
    """Every index and constraint involving ``columns`` (``{table: [column, ...]}``)."""
    found: dict[tuple[str, str, str], Built] = {}
    for table, names in columns.items():
        attnums = _attnums(connection, table, names)
        built_here = _indexes(connection, table, attnums)
        built_here += _constraints(connection, table, attnums)
        for built in built_here:
            found.setdefault((built.table, built.kind, built.name), built)
    return [found[key] for key in sorted(found)]


def table_state(connection: Any, table: str) -> dict[str, str]:
    """``{what: definition}`` of ``table``'s columns (type, NOT NULL, default, identity,
    comment, privileges), constraints, indexes and triggers."""
    state: dict[str, str] = {}
    for name, *rest in fetch_all(
        connection,
        """
        SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
               COALESCE(pg_get_expr(ad.adbin, ad.adrelid), ''), a.attidentity,
               a.attgenerated, COALESCE(col_description(a.attrelid, a.attnum), ''),
               COALESCE(a.attacl::text, '')
        FROM pg_attribute a
        LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
        WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped
        """,
        [q(table)],
    ):
        state[f"column {table}.{name}"] = "|".join(map(str, rest))
    for kind, name, definition in fetch_all(
        connection,
        """
        SELECT 'constraint', conname, pg_get_constraintdef(oid) FROM pg_constraint
        WHERE conrelid = %s::regclass
        UNION ALL
        SELECT 'index', ic.relname, pg_get_indexdef(i.indexrelid)
               || CASE WHEN i.indisclustered THEN ' (clustered)' ELSE '' END
               || CASE WHEN NOT i.indisvalid THEN ' (invalid)' ELSE '' END
        FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
        WHERE i.indrelid = %s::regclass
        UNION ALL
        SELECT 'trigger', tgname, pg_get_triggerdef(oid) || ' ' || tgenabled::text FROM pg_trigger
        WHERE tgrelid = %s::regclass AND NOT tgisinternal
        """,
        [q(table)] * 3,
    ):
        state[f"{kind} {table}.{name}"] = str(definition)
    return state
