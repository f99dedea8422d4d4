"""One table's swap in the online switch, in one short transaction: shadows and copies take
their originals' names; a sequence continues above where it stood and the largest value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .pg_catalog import Built, q
from .plan import Plan
from .shadows import attach_sql, shadow

__all__ = ["Swap", "trigger_name"]


def trigger_name(table: str) -> str:
    return shadow(f"snowid_adopt_{table}")


@dataclass(frozen=True)
class _Column:
    name: str
    default: str  # a default other than a sequence's, or ""
    comment: str
    identity: str  # "a" (ALWAYS), "d" (BY DEFAULT), "s" (serial), or ""
    sequence: str | None
    next: int  # the sequence's next value in the new column
    options: str  # the identity's sequence options


class Swap:
    """The swap of ``table``'s converted columns; ``order`` is every swap's table, in turn."""

    def __init__(self, plan: Plan, table: str, order: list[str]) -> None:
        self.plan, self.table, self.order = plan, table, order
        self.columns = [c.column for c in plan.columns_of(table)]

    def _turns(self, built: Built) -> list[str]:
        return [t for t in self.order if t in (built.table, built.target)]

    def work(self, cursor: Any) -> None:
        table = q(self.table)
        cursor.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        kept = [self._keep(cursor, name) for name in self.columns]
        self._drop_old_keys(cursor)
        function = q(trigger_name(self.table))
        cursor.execute(f"DROP TRIGGER IF EXISTS {function} ON {table}")
        cursor.execute(f"DROP FUNCTION IF EXISTS {function}()")
        for column in kept:
            self._swap_column(cursor, column)
        for statement in self._attach():
            cursor.execute(statement)
        for column in kept:
            self._continue_sequence(cursor, column)

    def _keep(self, cursor: Any, name: str) -> _Column:
        cursor.execute(
            """
            SELECT COALESCE(pg_get_expr(ad.adbin, ad.adrelid), ''),
                   COALESCE(col_description(a.attrelid, a.attnum), ''), a.attidentity,
                   pg_get_serial_sequence(%s, a.attname)
            FROM pg_attribute a
            LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
            WHERE a.attrelid = %s::regclass AND a.attname = %s
            """,
            [q(self.table), q(self.table), name],
        )
        default, comment, identity, sequence = cursor.fetchone()
        if sequence is None:
            return _Column(name, default, comment, "", None, 0, "")
        next_value, options = self._sequence_state(cursor, name, sequence)
        if not identity:
            cursor.execute(f"ALTER SEQUENCE {sequence} OWNED BY NONE")  # outlives the column
        elif (self.table, name) == (self.plan.facts.table, self.plan.facts.column):
            identity = "d"  # the adopted key takes ids from Python: BY DEFAULT
        return _Column(name, default, comment, identity or "s", sequence, next_value, options)

    def _sequence_state(self, cursor: Any, name: str, sequence: str) -> tuple[int, str]:

        cursor.execute(
            f"SELECT s.last_value, s.is_called, p.seqincrement, p.seqcache, p.seqcycle, "
            f"(SELECT MAX({q(name)}) FROM {q(self.table)}) FROM {sequence} s, pg_sequence p "
            "WHERE p.seqrelid = %s::regclass",
            [sequence],
        )
        last, called, increment, cache, cycle, largest = cursor.fetchone()
        following = last + increment if called else last
        options = f"INCREMENT BY {increment} CACHE {cache}{' CYCLE' if cycle else ''}"
        return max(following, (largest or 0) + 1), options

    def _drop_old_keys(self, cursor: Any) -> None:
        """The old keys whose first swap this is; the rest go with their columns."""
        for built in self.plan.facts.rebuilt:
            if built.kind == "foreign key" and self._turns(built)[:1] == [self.table]:
                cursor.execute(
                    f"ALTER TABLE {q(built.table)} DROP CONSTRAINT IF EXISTS {q(built.name)}"
                )

    def _swap_column(self, cursor: Any, column: _Column) -> None:
        table, name = q(self.table), q(column.name)
        cursor.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
        cursor.execute(f"ALTER TABLE {table} RENAME COLUMN {q(shadow(column.name))} TO {name}")
        cursor.execute(f"ALTER TABLE {table} ALTER COLUMN {name} DROP DEFAULT")
        if column.default and column.identity in ("", "s"):
            cursor.execute(f"ALTER TABLE {table} ALTER COLUMN {name} SET DEFAULT {column.default}")
        if column.comment:
            cursor.execute(f"COMMENT ON COLUMN {table}.{name} IS %s", [column.comment])

    def _attach(self) -> list[str]:

        kinds = ("unique", "primary key", "index", "check", "exclusion", "foreign key")
        statements, clustered = [], []
        for kind in kinds:
            for built in self.plan.facts.rebuilt:
                if built.kind != kind:
                    continue
                if kind == "foreign key":
                    if self._turns(built)[-1:] != [self.table]:
                        continue
                elif built.table != self.table:
                    continue
                statements.append(attach_sql(built))
                if built.clustered:
                    clustered.append(f"ALTER TABLE {q(self.table)} CLUSTER ON {q(built.name)}")
        return statements + clustered

    def _continue_sequence(self, cursor: Any, column: _Column) -> None:
        if column.sequence is None:
            return
        table, name = q(self.table), q(column.name)
        if column.identity == "s":
            cursor.execute(f"ALTER SEQUENCE {column.sequence} AS bigint OWNED BY {table}.{name}")
            sequence = column.sequence
        else:
            always = "ALWAYS" if column.identity == "a" else "BY DEFAULT"
            cursor.execute(
                f"ALTER TABLE {table} ALTER COLUMN {name} ADD GENERATED {always} AS IDENTITY "
                f"({column.options})"
            )
            cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [table, column.name])
            (sequence,) = cursor.fetchone()
        cursor.execute("SELECT setval(%s::regclass, %s, false)", [sequence, column.next])
