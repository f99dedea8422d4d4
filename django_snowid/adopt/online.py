"""The online switch on PostgreSQL: shadow columns synced by a trigger, a batched backfill,
then one short swap per table. Every step commits its journal position with its work (or
is safe to repeat): a killed run resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import OperationalError, connections, transaction

from ..exceptions import AdoptionError
from ..models import IdAdoption
from .plan import Plan

__all__ = ["Online", "shadow"]

SUFFIX = "_snowid"


def shadow(name: str) -> str:
    """The name of ``name``'s shadow (column, index, constraint), at most 63 bytes."""
    full = f"{name}{SUFFIX}"
    if len(full) <= 63:
        return full
    digest = hashlib.md5(name.encode()).hexdigest()[:8]
    return f"{name[: 63 - len(SUFFIX) - 9]}_{digest}{SUFFIX}"


@dataclass(frozen=True)
class Index:
    name: str
    columns: tuple[str, ...]
    unique: bool
    constraint: str  # "" for a plain index
    primary: bool
    method: str
    simple: bool  # no expression, no predicate


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Online:
    """Runs the online steps of ``plan`` on ``using``, recording each in ``journal``."""

    def __init__(
        self,
        plan: Plan,
        journal: IdAdoption,
        *,
        using: str,
        batch_size: int = 10_000,
        throttle: float = 0.0,
        lock_timeout_ms: int = 500,
        retries: int = 60,
        out: Callable[[str], None] = print,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> None:
        self.plan, self.journal, self.using = plan, journal, using
        self.connection = connections[using]
        self.batch_size, self.throttle = batch_size, throttle
        self.lock_timeout_ms, self.retries = lock_timeout_ms, retries
        self.out, self.progress = out, progress

    # ------------------------------------------------------------ plumbing
    def cursor(self) -> Any:
        return self.connection.cursor()

    def rows(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        with self.cursor() as cursor:
            cursor.execute(sql, params)
            return list(cursor.fetchall())

    def done_step(self, number: int, **progress: Any) -> None:
        """Record step ``number`` as done (inside the step's own transaction)."""
        journal = self.journal
        journal.step = number
        journal.progress = {**journal.progress, **progress}
        journal.save(using=self.using, update_fields=["step", "progress"])

    def short(self, number: int, work: Callable[[Any], None], **progress: Any) -> None:
        """``work`` and the journal in one transaction under ``lock_timeout``, retried."""
        for attempt in range(self.retries + 1):
            try:
                with transaction.atomic(using=self.using), self.cursor() as cursor:
                    cursor.execute(f"SET LOCAL lock_timeout = '{int(self.lock_timeout_ms)}ms'")
                    work(cursor)
                    self.done_step(number, **progress)
                return
            except OperationalError as exc:
                if getattr(exc.__cause__, "sqlstate", None) != "55P03" or attempt == self.retries:
                    raise
                self.out(f"  lock not granted in {self.lock_timeout_ms} ms, retrying")
                time.sleep(min(0.05 * 2**attempt, 2.0))

    def pk_of(self, table: str) -> str:
        found = self.rows(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
            "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary",
            [table],
        )
        if len(found) != 1:
            raise AdoptionError(f"{table} has no one-column primary key to backfill by.")
        return str(found[0][0])

    def indexes(self, table: str) -> list[Index]:
        found = self.rows(
            """
            SELECT ic.relname, ARRAY(
                SELECT a.attname FROM unnest(ix.indkey) WITH ORDINALITY k(num, ord)
                JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.num
                ORDER BY k.ord),
                ix.indisunique, COALESCE(c.conname, ''), ix.indisprimary, am.amname,
                ix.indexprs IS NULL AND ix.indpred IS NULL AND NOT (0 = ANY(ix.indkey))
            FROM pg_index ix
            JOIN pg_class ic ON ic.oid = ix.indexrelid
            JOIN pg_am am ON am.oid = ic.relam
            LEFT JOIN pg_constraint c ON c.conindid = ix.indexrelid
                AND c.conrelid = ix.indrelid AND c.contype IN ('p', 'u')
            WHERE ix.indrelid = %s::regclass ORDER BY ic.relname
            """,
            [table],
        )
        return [Index(n, tuple(c), u, con, p, m, s) for n, c, u, con, p, m, s in found]

    def foreign_keys(self, table: str) -> list[tuple[str, str, str, str, bool, bool]]:
        """The one-column foreign keys of ``table``."""
        found = self.rows(
            """
            SELECT c.conname, a.attname, c.confrelid::regclass::text, fa.attname,
                   c.condeferrable, c.condeferred
            FROM pg_constraint c
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
            JOIN pg_attribute fa ON fa.attrelid = c.confrelid AND fa.attnum = c.confkey[1]
            WHERE c.contype = 'f' AND c.conrelid = %s::regclass AND array_length(c.conkey, 1) = 1
            """,
            [table],
        )
        return [
            (str(n), str(c), str(t).strip('"'), str(rc), bool(d), bool(i))
            for n, c, t, rc, d, i in found
        ]

    def converted(self) -> set[tuple[str, str]]:
        return {(c.table, c.column) for t in self.plan.tables for c in self.plan.columns_of(t)}

    # --------------------------------------------------------------- steps
    def run(self, start: int) -> None:
        for step in self.plan.steps[start:]:
            if step.action in ("write_migration", "record"):
                continue  # the run's own (migration files, the record)
            self.out(
                f"step {step.number}/{len(self.plan.steps)}: {step.what}"
                + (f" ({step.table})" if step.table else "")
            )
            getattr(self, f"step_{step.action}")(step.number, step.table)

    def step_prepare(self, number: int, table: str) -> None:
        columns = self.plan.columns_of(table)
        function = shadow(f"snowid_adopt_{table}")

        def work(cursor: Any) -> None:
            for c in columns:
                null = "" if c.nullable else " NOT NULL DEFAULT 0"
                cursor.execute(
                    f"ALTER TABLE {q(table)} ADD COLUMN IF NOT EXISTS "
                    f"{q(shadow(c.column))} bigint{null}"
                )
            body = " ".join(f"NEW.{q(shadow(c.column))} := NEW.{q(c.column)};" for c in columns)
            cursor.execute(
                f"CREATE OR REPLACE FUNCTION {q(function)}() RETURNS trigger LANGUAGE plpgsql "
                f"AS $$ BEGIN {body} RETURN NEW; END $$"
            )
            cursor.execute(f"DROP TRIGGER IF EXISTS {q(function)} ON {q(table)}")
            cursor.execute(
                f"CREATE TRIGGER {q(function)} BEFORE INSERT OR UPDATE ON {q(table)} "
                f"FOR EACH ROW EXECUTE FUNCTION {q(function)}()"
            )

        self.short(number, work)

    def step_backfill(self, number: int, table: str) -> None:
        """Copy the rows up to the largest key at the start (the trigger covers later ones)."""

        columns = self.plan.columns_of(table)
        pk = self.pk_of(table)
        sets = ", ".join(f"{q(shadow(c.column))} = {q(c.column)}" for c in columns)
        differs = " OR ".join(
            f"{q(shadow(c.column))} IS DISTINCT FROM {q(c.column)}" for c in columns
        )
        positions = dict(self.journal.progress.get("backfill", {}))
        if f"{table}:upto" not in positions:
            positions[f"{table}:upto"] = self.rows(f"SELECT MAX({q(pk)}) FROM {q(table)}")[0][0]
            self._save_backfill(positions)
        bound = positions[f"{table}:upto"]
        last = positions.get(table)
        total = self.plan.rows_of(table)
        done = int(positions.get(f"{table}:rows", 0))
        while bound is not None and (last is None or last < bound):
            after = "" if last is None else f"AND {q(pk)} > %s"
            params = [bound] if last is None else [bound, last]
            upto = self.rows(
                f"SELECT {q(pk)} FROM {q(table)} WHERE {q(pk)} <= %s {after} ORDER BY {q(pk)} "
                "OFFSET %s LIMIT 1",
                [*params, self.batch_size - 1],
            )
            end = upto[0][0] if upto else bound
            lower = "" if last is None else f"{q(pk)} > %s AND "
            with transaction.atomic(using=self.using), self.cursor() as cursor:
                cursor.execute(
                    f"UPDATE {q(table)} SET {sets} WHERE {lower}{q(pk)} <= %s AND ({differs})",
                    [*params[1:], end],
                )
                done += self.batch_size
                positions.update({table: end, f"{table}:rows": done})
                self._save_backfill(positions)
            last = end
            if self.progress:
                self.progress(table, min(done, total), total)
            if self.throttle:
                time.sleep(self.throttle)
        with transaction.atomic(using=self.using):
            self.done_step(number)

    def _save_backfill(self, positions: dict[str, Any]) -> None:
        self.journal.progress = {**self.journal.progress, "backfill": positions}
        self.journal.save(using=self.using, update_fields=["progress"])

    def _index_plan(self, table: str) -> list[tuple[Index, str, tuple[str, ...]]]:
        names = {c.column for c in self.plan.columns_of(table)}
        planned = []
        for index in self.indexes(table):
            if index.name.endswith(SUFFIX) or not names.intersection(index.columns):
                continue
            if not index.simple:
                raise AdoptionError(
                    f"Index {index.name} of {table} has an expression or a predicate on "
                    f"{', '.join(sorted(names))}: rebuild it by hand, or use --plain."
                )
            columns = tuple(shadow(c) if c in names else c for c in index.columns)
            planned.append((index, shadow(index.name), columns))
        return planned

    def step_index(self, number: int, table: str) -> None:
        for index, name, columns in self._index_plan(table):
            valid = self.rows(
                "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                "WHERE c.relname = %s",
                [name],
            )
            if valid and valid[0][0]:
                continue
            with self.cursor() as cursor:
                if valid:  # left invalid by a build that was killed
                    cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {q(name)}")
                unique = "UNIQUE " if index.unique else ""
                cursor.execute(
                    f"CREATE {unique}INDEX CONCURRENTLY {q(name)} ON {q(table)} "
                    f"USING {index.method} ({', '.join(map(q, columns))})"
                )
        with transaction.atomic(using=self.using):
            self.done_step(number)

    def step_foreign_keys(self, number: int, table: str) -> None:
        converted = self.converted()
        names = dict(self.journal.progress.get("constraints", {}))
        todo = []
        for name, column, target, target_column, deferrable, deferred in self.foreign_keys(table):
            if name.endswith(SUFFIX) or (table, column) not in converted:
                continue
            new = shadow(name)
            names[f"{table}.{new}"] = name
            referenced = (
                shadow(target_column) if (target, target_column) in converted else target_column
            )
            timing = (
                " DEFERRABLE INITIALLY DEFERRED"
                if deferred
                else (" DEFERRABLE" if deferrable else "")
            )
            todo.append(
                (
                    new,
                    f"ALTER TABLE {q(table)} ADD CONSTRAINT {q(new)} FOREIGN KEY "
                    f"({q(shadow(column))}) REFERENCES {q(target)} ({q(referenced)})"
                    f"{timing} NOT VALID",
                )
            )
        existing = {n for n, *_ in self.foreign_keys(table)}

        def work(cursor: Any) -> None:
            for new, sql in todo:
                if new not in existing:
                    cursor.execute(sql)

        self.short(self.journal.step, work, constraints=names)  # the keys, not yet valid
        for new, _sql in todo:
            with self.cursor() as cursor:
                cursor.execute(f"ALTER TABLE {q(table)} VALIDATE CONSTRAINT {q(new)}")
        with transaction.atomic(using=self.using):
            self.done_step(number)

    def step_swap(self, number: int, table: str) -> None:
        columns = self.plan.columns_of(table)
        names = {c.column for c in columns}
        constraints: dict[str, str] = self.journal.progress.get("constraints", {})
        indexes = self._index_plan(table)
        pk_table = table == self.plan.facts.table
        function = shadow(f"snowid_adopt_{table}")

        def work(cursor: Any) -> None:
            cursor.execute(f"LOCK TABLE {q(table)} IN ACCESS EXCLUSIVE MODE")
            last = None
            if pk_table and self.plan.facts.sequence:
                cursor.execute(
                    "SELECT pg_sequence_last_value(pg_get_serial_sequence(%s, %s)::regclass)",
                    [table, self.plan.facts.column],
                )
                last = cursor.fetchone()[0]
            # Foreign keys on the old columns: those pointing here, and this table's own.
            cursor.execute(
                """
                SELECT c.conrelid::regclass::text, c.conname FROM pg_constraint c
                JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = c.confkey[1]
                WHERE c.contype = 'f' AND c.confrelid = %s::regclass AND a.attname = ANY(%s)
                UNION
                SELECT c.conrelid::regclass::text, c.conname FROM pg_constraint c
                JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
                WHERE c.contype = 'f' AND c.conrelid = %s::regclass AND a.attname = ANY(%s)
                """,
                [table, list(names), table, list(names)],
            )
            for owner, name in cursor.fetchall():
                cursor.execute(f"ALTER TABLE {owner} DROP CONSTRAINT {q(name)}")
            cursor.execute(f"DROP TRIGGER IF EXISTS {q(function)} ON {q(table)}")
            cursor.execute(f"DROP FUNCTION IF EXISTS {q(function)}()")
            for c in columns:
                cursor.execute(f"ALTER TABLE {q(table)} DROP COLUMN {q(c.column)}")
                cursor.execute(
                    f"ALTER TABLE {q(table)} RENAME COLUMN {q(shadow(c.column))} TO {q(c.column)}"
                )
                if not c.nullable:
                    cursor.execute(
                        f"ALTER TABLE {q(table)} ALTER COLUMN {q(c.column)} DROP DEFAULT"
                    )
            for index, new, _columns in indexes:
                if index.constraint:
                    kind = "PRIMARY KEY" if index.primary else "UNIQUE"
                    cursor.execute(
                        f"ALTER TABLE {q(table)} ADD CONSTRAINT {q(index.constraint)} "
                        f"{kind} USING INDEX {q(new)}"
                    )
                else:
                    cursor.execute(f"ALTER INDEX {q(new)} RENAME TO {q(index.name)}")
            for key, old in constraints.items():
                owner, new = key.split(".", 1)
                if owner == table:
                    cursor.execute(f"ALTER TABLE {q(table)} RENAME CONSTRAINT {q(new)} TO {q(old)}")
            if last is not None or (pk_table and self.plan.facts.sequence):
                column = self.plan.facts.column
                cursor.execute(
                    f"ALTER TABLE {q(table)} ALTER COLUMN {q(column)} "
                    "ADD GENERATED BY DEFAULT AS IDENTITY"
                )
                if last is not None:
                    cursor.execute(
                        "SELECT setval(pg_get_serial_sequence(%s, %s)::regclass, %s)",
                        [table, column, last],
                    )

        self.short(number, work)

    def step_drop_identity(self, number: int, table: str) -> None:
        column = self.plan.facts.column

        def work(cursor: Any) -> None:
            cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [table, column])
            sequence = cursor.fetchone()[0]
            cursor.execute(
                f"ALTER TABLE {q(table)} ALTER COLUMN {q(column)} DROP IDENTITY IF EXISTS"
            )
            cursor.execute(f"ALTER TABLE {q(table)} ALTER COLUMN {q(column)} DROP DEFAULT")
            if sequence:
                cursor.execute(f"DROP SEQUENCE IF EXISTS {sequence}")

        self.short(number, work)

    # ---------------------------------------------------------------- undo
    def undo(self) -> None:
        """Take back every step before the first swap."""
        swaps = [s.number for s in self.plan.steps if s.action == "swap"]
        if swaps and self.journal.step >= swaps[0]:
            raise AdoptionError(
                f"{self.plan.facts.label}: the swap has begun; the way back is a migration back "
                "to AutoField/BigAutoField."
            )
        constraints: dict[str, str] = self.journal.progress.get("constraints", {})
        with self.cursor() as cursor:
            for key in constraints:
                owner, new = key.split(".", 1)
                cursor.execute(f"ALTER TABLE {q(owner)} DROP CONSTRAINT IF EXISTS {q(new)}")
            for table in self.plan.tables:
                for index in self.indexes(table):
                    if index.name.endswith(SUFFIX):
                        cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {q(index.name)}")
                function = shadow(f"snowid_adopt_{table}")
                cursor.execute(f"DROP TRIGGER IF EXISTS {q(function)} ON {q(table)}")
                cursor.execute(f"DROP FUNCTION IF EXISTS {q(function)}()")
                for c in self.plan.columns_of(table):
                    cursor.execute(
                        f"ALTER TABLE {q(table)} DROP COLUMN IF EXISTS {q(shadow(c.column))}"
                    )
