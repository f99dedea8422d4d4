"""What the database says of a table's integer columns: their types and nullability."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["column_types", "fetch_all"]


def fetch_all(connection: Any, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
    """The rows ``sql`` returns on ``connection``."""
    with connection.cursor() as cursor:
        cursor.execute(sql, list(params))
        return list(cursor.fetchall())


def column_types(connection: Any, table: str) -> dict[str, tuple[str, bool]]:
    """``{column: (type, nullable)}`` of ``table``; types are ``""`` on SQLite, whose
    integers all hold 64 bits."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA table_info({connection.ops.quote_name(table)})")
            return {row[1]: ("", not row[3]) for row in cursor.fetchall()}
    schema = "current_schema()" if connection.vendor == "postgresql" else "DATABASE()"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
            f"WHERE table_schema = {schema} AND table_name = %s",
            [table],
        )
        return {name: (kind, nullable == "YES") for name, kind, nullable in cursor.fetchall()}
