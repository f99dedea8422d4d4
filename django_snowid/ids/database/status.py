"""Which columns with ``database_ids=True`` have the database default they should, in
each PostgreSQL database that holds their model (``snowid_database_ids``, W600)."""

from __future__ import annotations

from typing import Any

from django.db import DatabaseError, connections, router
from django.db.models import Field

from ... import inventory
from ...exceptions import SnowidError
from .default import SnowflakeDefault
from .install import database_fields
from .postgresql import comment_of
from .reservation import database_node

__all__ = ["column_rows", "missing"]


def _expected(field: Field) -> SnowflakeDefault | None:
    value = getattr(field, "db_default", None)
    return value if isinstance(value, SnowflakeDefault) else None


def column_rows(alias: str | None = None) -> list[dict[str, Any]]:
    """One row a column and PostgreSQL database: its default, the one it should have, and
    ``state`` (``ok``, ``missing``, ``stale``, ``no function`` or ``wrong node``)."""

    rows = []
    aliases = [alias] if alias else list(connections)
    for field in database_fields():
        expected = _expected(field)
        if expected is None:
            continue
        for name in aliases:
            if connections[name].vendor != "postgresql":
                continue
            if router.allow_migrate_model(name, field.model):
                rows.append(_column_row(field, expected.geometry.function, name))
    return rows


def _column_row(field: Field, function: str, alias: str) -> dict[str, Any]:
    table = field.model._meta.db_table
    default, comment = _installed(connections[alias], table, field.column, function)
    node = database_node(field.layout, alias)  # type: ignore[attr-defined]
    return {
        "database": alias,
        "field": inventory.field_label(field),
        "table": table,
        "column": field.column,
        "node": node,
        "function": function,
        "default": default,
        "state": _state(default, comment, function, node),
    }


def _installed(connection: Any, table: str, column: str, function: str) -> tuple[str, str | None]:
    """The column's default (``""``: none) and the function's comment (``None``: none)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_default FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s "
            "AND column_name = %s",
            [table, column],
        )
        found = cursor.fetchone()
        cursor.execute(
            "SELECT obj_description(p.oid, 'pg_proc') FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname = current_schema() AND p.proname = %s",
            [function],
        )
        comment = cursor.fetchone()
    return (found[0] if found else None) or "", None if comment is None else comment[0] or ""


def _state(default: str, comment: str | None, function: str, node: int) -> str:
    if not default:
        return "missing"
    if f"{function}()" not in default:
        return "stale"
    if comment is None:
        return "no function"
    if not comment.startswith(comment_of(node, 0).split(" tolerance")[0]):
        return "wrong node"
    return "ok"


def missing(alias: str | None = None) -> list[dict[str, Any]]:
    """The rows of :func:`column_rows` that are not ``ok`` (none when unreachable, or
    when E605 says a database has no node value)."""
    try:
        return [row for row in column_rows(alias) if row["state"] != "ok"]
    except (DatabaseError, SnowidError):
        return []
