"""The plain migration on PostgreSQL and MariaDB/MySQL: columns made bigint in place, so
that the database keeps what it holds on them (MariaDB's keys are made again as they were)."""

from __future__ import annotations

from typing import Any

from . import mysql_catalog
from .pg_catalog import q

__all__ = ["widen_in_place"]


def _by_table(columns: list[tuple[str, str]]) -> dict[str, list[str]]:
    tables: dict[str, list[str]] = {}
    for table, column in columns:
        tables.setdefault(table, []).append(column)
    return tables


def _serial_sequence(cursor: Any, table: str, column: str) -> str | None:
    cursor.execute(
        "SELECT pg_get_serial_sequence(%s, %s), a.attidentity FROM pg_attribute a "
        "WHERE a.attrelid = %s::regclass AND a.attname = %s",
        [q(table), column, q(table), column],
    )
    sequence, identity = cursor.fetchone()
    return sequence if sequence and not identity else None


def _postgresql(connection: Any, columns: list[tuple[str, str]], pk: tuple[str, str]) -> None:
    with connection.cursor() as cursor:
        for table, names in _by_table(columns).items():
            changes = ", ".join(f"ALTER COLUMN {q(name)} TYPE bigint" for name in names)
            cursor.execute(f"ALTER TABLE {q(table)} {changes}")
            for name in names:
                sequence = _serial_sequence(cursor, table, name)
                if sequence and (table, name) != pk:
                    cursor.execute(f"ALTER SEQUENCE {sequence} AS bigint")
        table, column = pk
        sequence = _serial_sequence(cursor, table, column)
        cursor.execute(f"ALTER TABLE {q(table)} ALTER COLUMN {q(column)} DROP IDENTITY IF EXISTS")
        if sequence:
            cursor.execute(f"ALTER TABLE {q(table)} ALTER COLUMN {q(column)} DROP DEFAULT")
            cursor.execute(f"DROP SEQUENCE IF EXISTS {sequence}")


def _mysql(connection: Any, columns: list[tuple[str, str]], pk: tuple[str, str]) -> None:
    quote = connection.ops.quote_name
    tables = _by_table(columns)
    touched = set(columns)
    keys = [
        key
        for key in mysql_catalog.foreign_keys(connection, tables)
        if touched.intersection((key.table, c) for c in key.columns)
        or touched.intersection((key.target, c) for c in key.target_columns)
    ]
    definitions = {
        (table, name): mysql_catalog.column_definition(
            connection, table, name, generated=(table, name) != pk
        )
        for table, name in columns
    }
    with connection.cursor() as cursor:
        for key in keys:
            cursor.execute(f"ALTER TABLE {quote(key.table)} DROP FOREIGN KEY {quote(key.name)}")
        for table, names in tables.items():
            changes = ", ".join(f"MODIFY {quote(n)} {definitions[table, n]}" for n in names)
            cursor.execute(f"ALTER TABLE {quote(table)} {changes}")
        for key in keys:
            cursor.execute(key.add_sql(quote))


def widen_in_place(connection: Any, columns: list[tuple[str, str]], pk: tuple[str, str]) -> None:
    """Make ``columns`` (``(table, column)``, the key ``pk`` among them or not) bigint,
    keeping the rest of each column; ``pk`` loses its identity or ``AUTO_INCREMENT``."""
    if connection.vendor == "postgresql":
        _postgresql(connection, columns, pk)
    elif connection.vendor == "mysql":
        if pk not in columns:
            columns = [*columns, pk]  # a bigint AUTO_INCREMENT key still loses it
        _mysql(connection, columns, pk)
