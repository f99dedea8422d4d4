"""The catalog of the tables a switch touches, on any backend: keys pointing at them, and
a snapshot of their columns, constraints and indexes, compared before and after."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from . import mysql_catalog, pg_catalog
from .pg_catalog import Reference

__all__ = ["differences", "references", "snapshot"]

#: How a converted column's type reads before and after, per backend.
_WIDTH = re.compile(
    r"^(integer|smallint|bigint|int\(\d+\)|smallint\(\d+\)|mediumint\(\d+\)|"
    r"bigint\(\d+\)|tinyint\(\d+\)|int|bigint)( unsigned)?(?=\||$)"
)
_OPCLASS = re.compile(r"\b(gist_)?int[248](_\w*)?_ops\b")


def references(connection: Any, tables: Iterable[str]) -> list[Reference]:
    """Every foreign key column pointing at ``tables`` (none on SQLite)."""
    names = sorted(set(tables))
    reader = {"postgresql": pg_catalog.references, "mysql": mysql_catalog.references}
    read = reader.get(connection.vendor)
    return read(connection, names) if read and names else []


def snapshot(connection: Any, tables: Iterable[str]) -> dict[str, str]:
    """``{what: definition}`` of ``tables``' columns, constraints, indexes (not SQLite)."""
    state: dict[str, str] = {}
    reader = {"postgresql": pg_catalog.table_state, "mysql": mysql_catalog.table_state}
    read = reader.get(connection.vendor)
    if read is None:
        return state
    existing = set(connection.introspection.table_names())
    for table in sorted(set(tables)):
        if table in existing:
            state.update(read(connection, table))
    return state


def _normal(key: str, value: str, widened: set[str], loose: set[str]) -> str:
    if key in widened:
        value = _WIDTH.sub("(widened)", value)
    if key in loose:  # the adopted key: its default and identity go on purpose
        parts = value.split("|")
        value = "|".join([*parts[:2], "", "", *parts[4:]])
    return _OPCLASS.sub(lambda m: f"{m.group(1) or ''}int*{m.group(2) or ''}_ops", value)


def differences(
    before: dict[str, str],
    after: dict[str, str],
    widened: Iterable[tuple[str, str]],
    pk: tuple[str, str],
) -> list[str]:
    """What ``after`` holds differently from ``before``: each converted column's type
    aside (it must be bigint now), and the adopted key's default and identity."""
    keys = {f"column {t}.{c}" for t, c in widened}
    loose = {f"column {pk[0]}.{pk[1]}"}
    found = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old is not None and new is not None:
            if key in keys and not new.lower().startswith("bigint"):
                found.append(f"{key}: {new.split('|')[0]}, not bigint")
            old, new = _normal(key, old, keys, loose), _normal(key, new, keys, loose)
        if old != new:
            found.append(f"{key}: {old or 'missing'} -> {new or 'missing'}")
    return found
