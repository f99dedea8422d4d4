"""MariaDB/MySQL's ``information_schema`` on the tables a switch touches: foreign keys
(with their rules), columns, checks and indexes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .pg_catalog import Reference
from .schema import fetch_all

__all__ = ["ForeignKey", "column_definition", "foreign_keys", "references", "table_state"]


def _in(values: list[str]) -> str:
    return ", ".join(["%s"] * len(values))


def references(connection: Any, names: list[str]) -> list[Reference]:
    """Every foreign key column, of any table, pointing at a column of ``names``."""
    found = fetch_all(
        connection,
        "SELECT CONSTRAINT_NAME, TABLE_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, "
        "REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE "
        "WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_SCHEMA = DATABASE() "
        f"AND REFERENCED_TABLE_NAME IN ({_in(names)}) "
        "ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION",
        names,
    )
    return [Reference(*map(str, row)) for row in found]


@dataclass(frozen=True)
class ForeignKey:
    table: str
    name: str
    columns: tuple[str, ...]
    target: str
    target_columns: tuple[str, ...]
    on_update: str
    on_delete: str

    def add_sql(self, quote: Any) -> str:
        cols = ", ".join(map(quote, self.columns))
        refs = ", ".join(map(quote, self.target_columns))
        return (
            f"ALTER TABLE {quote(self.table)} ADD CONSTRAINT {quote(self.name)} FOREIGN KEY "
            f"({cols}) REFERENCES {quote(self.target)} ({refs}) ON UPDATE {self.on_update} "
            f"ON DELETE {self.on_delete}"
        )


def foreign_keys(connection: Any, tables: Iterable[str]) -> list[ForeignKey]:
    """The foreign keys of ``tables`` and those pointing at them."""
    names = sorted(set(tables))
    if not names:
        return []
    found = fetch_all(
        connection,
        "SELECT k.TABLE_NAME, k.CONSTRAINT_NAME, k.COLUMN_NAME, k.REFERENCED_TABLE_NAME, "
        "k.REFERENCED_COLUMN_NAME, r.UPDATE_RULE, r.DELETE_RULE "
        "FROM information_schema.KEY_COLUMN_USAGE k "
        "JOIN information_schema.REFERENTIAL_CONSTRAINTS r "
        "ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME "
        "AND r.TABLE_NAME = k.TABLE_NAME "
        "WHERE k.TABLE_SCHEMA = DATABASE() AND k.REFERENCED_TABLE_NAME IS NOT NULL "
        f"AND (k.TABLE_NAME IN ({_in(names)}) OR k.REFERENCED_TABLE_NAME IN ({_in(names)})) "
        "ORDER BY k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION",
        [*names, *names],
    )
    keys: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for row in found:
        keys.setdefault((str(row[0]), str(row[1])), []).append(row)
    return [
        ForeignKey(
            table=table,
            name=name,
            columns=tuple(str(r[2]) for r in rows),
            target=str(rows[0][3]),
            target_columns=tuple(str(r[4]) for r in rows),
            on_update=str(rows[0][5]),
            on_delete=str(rows[0][6]),
        )
        for (table, name), rows in keys.items()
    ]


def _columns(connection: Any, table: str) -> list[tuple[Any, ...]]:
    return fetch_all(
        connection,
        "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA, COLUMN_COMMENT "
        "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s "
        "ORDER BY ORDINAL_POSITION",
        [table],
    )


def column_definition(connection: Any, table: str, column: str, *, generated: bool) -> str:
    """``column``'s definition for ``MODIFY``, as it is but ``BIGINT`` (and without
    ``AUTO_INCREMENT`` unless ``generated``)."""
    for name, kind, nullable, default, extra, comment in _columns(connection, table):
        if name != column:
            continue
        parts = ["BIGINT UNSIGNED" if "unsigned" in str(kind) else "BIGINT"]
        parts.append("NULL" if nullable == "YES" else "NOT NULL")
        if default is not None and str(default).upper() != "NULL":
            parts.append(f"DEFAULT {default}")
        if generated and "auto_increment" in str(extra).lower():
            parts.append("AUTO_INCREMENT")
        if comment:
            parts.append("COMMENT " + connection.schema_editor().quote_value(str(comment)))
        return " ".join(parts)
    raise LookupError(f"{table}.{column}")


def table_state(connection: Any, table: str) -> dict[str, str]:
    """``{what: definition}`` of ``table``'s columns, foreign keys, checks and indexes."""
    state = {
        f"column {table}.{name}": "|".join(map(str, rest))
        for name, *rest in _columns(connection, table)
    }
    for key in foreign_keys(connection, [table]):
        if key.table == table:
            state[f"foreign key {table}.{key.name}"] = key.add_sql(str)
    for name, clause in fetch_all(
        connection,
        "SELECT CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS "
        "WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = %s",
        [table],
    ):
        state[f"check {table}.{name}"] = str(clause)
    for name, unique, columns in fetch_all(
        connection,
        "SELECT INDEX_NAME, NON_UNIQUE, GROUP_CONCAT(CONCAT_WS(' ', COLUMN_NAME, SUB_PART, "
        "COLLATION, INDEX_TYPE) ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS "
        "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s GROUP BY INDEX_NAME, NON_UNIQUE",
        [table],
    ):
        state[f"index {table}.{name}"] = f"{'' if int(unique) else 'UNIQUE '}{columns}"
    return state
