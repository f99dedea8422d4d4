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
        for name in aliases:
            connection = connections[name]
            if connection.vendor != "postgresql" or expected is None:
                continue
            if not router.allow_migrate_model(name, field.model):
                continue
            function = expected.geometry.function
            table = field.model._meta.db_table
            column = field.column
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
            default = (found[0] if found else None) or ""
            node = database_node(field.layout, name)  # type: ignore[attr-defined]
            if not default:
                state = "missing"
            elif f"{function}()" not in default:
                state = "stale"
            elif comment is None:
                state = "no function"
            elif not (comment[0] or "").startswith(comment_of(node, 0).split(" tolerance")[0]):
                state = "wrong node"
            else:
                state = "ok"
            rows.append(
                {
                    "database": name,
                    "field": inventory.field_label(field),
                    "table": table,
                    "column": column,
                    "node": node,
                    "function": function,
                    "default": default,
                    "state": state,
                }
            )
    return rows


def missing(alias: str | None = None) -> list[dict[str, Any]]:
    """The rows of :func:`column_rows` that are not ``ok`` (none when unreachable, or
    when E605 says a database has no node value)."""
    try:
        return [row for row in column_rows(alias) if row["state"] != "ok"]
    except (DatabaseError, SnowidError):
        return []
