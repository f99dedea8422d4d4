"""One statement that changes a row and hands back one integer: one round trip, no SELECT
(``RETURNING``, or ``LAST_INSERT_ID(expr)`` on MariaDB/MySQL)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from .private import kept_cursor, last_insert_id

__all__ = ["built", "execute", "returned", "returning"]

T = TypeVar("T")
_built: dict[tuple[str, str, str], Any] = {}


def returned(connection: Any, expr: str) -> str:
    """``expr``, made the value the statement hands back on MariaDB/MySQL."""
    return f"LAST_INSERT_ID({expr})" if connection.vendor == "mysql" else expr


def returning(connection: Any, expr: str) -> str:
    """The clause that hands back ``expr`` (computed from the new row), where there is one."""
    return "" if connection.vendor == "mysql" else f" RETURNING {expr}"


def built(connection: Any, what: str, build: Callable[[Any], T]) -> T:
    """``build(connection)``, built once per statement kind, vendor and database alias."""
    key = (what, connection.vendor, connection.alias)
    found = _built.get(key)
    if found is None:
        found = _built[key] = build(connection)
    return found


def execute(connection: Any, sql: str, params: Sequence[Any] | Mapping[str, Any]) -> int | None:
    """Run ``sql``; the value it handed back, or ``None`` if it changed no row."""
    cursor = kept_cursor(connection)
    cursor.execute(sql, params)
    if connection.vendor == "mysql":
        return last_insert_id(cursor) if cursor.rowcount else None
    # Fetching the only row ends SQLite's implicit transaction.

    row = cursor.fetchone()
    return None if row is None else int(row[0])
