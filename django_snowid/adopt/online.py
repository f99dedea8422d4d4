"""The online switch on PostgreSQL: shadow columns synced by a trigger, a batched backfill,
copies of their indexes and constraints, one short swap per table, the catalog compared.
Every step commits its journal position with its work: a killed run resumes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.db import OperationalError, connections, transaction

from ..db.errors import is_lock_timeout
from ..exceptions import AdoptionError
from ..models import IdAdoption
from . import catalog
from .pg_catalog import Built, q
from .plan import Plan
from .shadows import create_sql, rename_columns, same_definition, shadow
from .swap import Swap, trigger_name

__all__ = ["Online", "shadow"]


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
    def rows(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        with self.connection.cursor() as cursor:
            cursor.execute(sql, params)
            return list(cursor.fetchall())

    def execute(self, sql: str, params: Any = None) -> None:
        with self.connection.cursor() as cursor:
            cursor.execute(sql, params)

    def save(self, **progress: Any) -> None:
        self.journal.progress = {**self.journal.progress, **progress}
        self.journal.save(using=self.using, update_fields=["progress"])

    def done_step(self, number: int, **progress: Any) -> None:
        """Record step ``number`` as done (inside the step's own transaction)."""
        journal = self.journal
        journal.step = number
        journal.progress = {**journal.progress, **progress}
        journal.save(using=self.using, update_fields=["step", "progress"])

    def retried(self, work: Callable[[Any], None], *, atomic: bool = True) -> None:
        """``work(cursor)`` under ``lock_timeout`` (atomic or not), again while refused."""
        timeout = f"{int(self.lock_timeout_ms)}ms"
        for attempt in range(self.retries + 1):
            try:
                if atomic:
                    with transaction.atomic(using=self.using), self.connection.cursor() as cursor:
                        cursor.execute(f"SET LOCAL lock_timeout = '{timeout}'")
                        work(cursor)
                    return
                with self.connection.cursor() as cursor:
                    cursor.execute(f"SET lock_timeout = '{timeout}'")
                    try:
                        work(cursor)
                    finally:
                        cursor.execute("RESET lock_timeout")
                return
            except OperationalError as exc:
                if not is_lock_timeout(exc) or attempt == self.retries:
                    raise
                self.out(f"  lock not granted in {self.lock_timeout_ms} ms, retrying")
                time.sleep(min(0.05 * 2**attempt, 2.0))

    def short(self, number: int, work: Callable[[Any], None], **progress: Any) -> None:
        """``work`` and the journal in one transaction under ``lock_timeout``, retried."""

        def both(cursor: Any) -> None:
            work(cursor)
            self.done_step(number, **progress)

        self.retried(both)

    def pk_of(self, table: str) -> str:
        found = self.rows(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
            "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary",
            [q(table)],
        )
        if len(found) != 1:
            raise AdoptionError(f"{table} has no one-column primary key to backfill by.")
        return str(found[0][0])

    def converted(self, table: str) -> list[str]:
        return [c.column for c in self.plan.columns_of(table)]

    def tables(self) -> list[str]:
        built = [t for b in self.plan.facts.rebuilt for t in (b.table, b.target) if t]
        return list(dict.fromkeys([*self.plan.tables, *built]))

    # --------------------------------------------------------------- steps
    def run(self, start: int) -> None:
        if "catalog" not in self.journal.progress and start <= 1:
            state = catalog.snapshot(self.connection, self.tables())
            self.save(catalog=state)  # before the first change
        for step in self.plan.steps[start:]:
            if step.action in ("write_migration", "record"):
                continue  # the run's own (migration files, the record)
            self.out(f"step {step.number}/{len(self.plan.steps)}: {step.what}")
            getattr(self, f"step_{step.action}")(step.number, step.table)

    def step_prepare(self, number: int, table: str) -> None:
        columns = self.plan.columns_of(table)
        function = q(trigger_name(table))

        def work(cursor: Any) -> None:
            for c in columns:
                null = "" if c.nullable else " NOT NULL DEFAULT 0"
                cursor.execute(
                    f"ALTER TABLE {q(table)} ADD COLUMN IF NOT EXISTS "
                    f"{q(shadow(c.column))} bigint{null}"
                )
            body = " ".join(f"NEW.{q(shadow(c.column))} := NEW.{q(c.column)};" for c in columns)
            cursor.execute(
                f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql "
                f"AS $$ BEGIN {body} RETURN NEW; END $$"
            )
            cursor.execute(f"DROP TRIGGER IF EXISTS {function} ON {q(table)}")
            cursor.execute(
                f"CREATE TRIGGER {function} BEFORE INSERT OR UPDATE ON {q(table)} "
                f"FOR EACH ROW EXECUTE FUNCTION {function}()"
            )
            cursor.execute(f"ALTER TABLE {q(table)} ENABLE ALWAYS TRIGGER {function}")

        self.short(number, work)

    def step_backfill(self, number: int, table: str) -> None:
        """Copy the rows up to the largest key at the start (the trigger covers later ones)."""
        pk = self.pk_of(table)
        positions = dict(self.journal.progress.get("backfill", {}))
        if f"{table}:upto" not in positions:
            positions[f"{table}:upto"] = self.rows(f"SELECT MAX({q(pk)}) FROM {q(table)}")[0][0]
            self.save(backfill=positions)
        bound, last = positions[f"{table}:upto"], positions.get(table)
        while bound is not None and (last is None or last < bound):
            last = self._backfill_batch(table, pk, bound, last, positions)
            if self.progress:
                total = self.plan.rows_of(table)
                self.progress(table, min(int(positions[f"{table}:rows"]), total), total)
            if self.throttle:
                time.sleep(self.throttle)
        with transaction.atomic(using=self.using):
            self.done_step(number)

    def _backfill_batch(
        self, table: str, pk: str, bound: int, last: int | None, positions: dict[str, Any]
    ) -> int:
        columns = self.plan.columns_of(table)
        sets = ", ".join(f"{q(shadow(c.column))} = {q(c.column)}" for c in columns)
        differs = " OR ".join(
            f"{q(shadow(c.column))} IS DISTINCT FROM {q(c.column)}" for c in columns
        )
        after = "" if last is None else f"AND {q(pk)} > %s"
        params = [bound] if last is None else [bound, last]
        upto = self.rows(
            f"SELECT {q(pk)} FROM {q(table)} WHERE {q(pk)} <= %s {after} ORDER BY {q(pk)} "
            "OFFSET %s LIMIT 1",
            [*params, self.batch_size - 1],
        )
        end = upto[0][0] if upto else bound
        lower = "" if last is None else f"{q(pk)} > %s AND "
        with transaction.atomic(using=self.using):
            self.execute(
                f"UPDATE {q(table)} SET {sets} WHERE {lower}{q(pk)} <= %s AND ({differs})",
                [*params[1:], end],
            )
            done = int(positions.get(f"{table}:rows", 0)) + self.batch_size
            positions.update({table: end, f"{table}:rows": done})
            self.save(backfill=positions)
        return int(end)

    def step_index(self, number: int, table: str) -> None:
        for built in self.plan.built_of(table, "index", "unique", "primary key"):
            name = shadow(built.name)
            valid = self.rows(
                "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                "WHERE c.relname = %s AND i.indrelid = %s::regclass",
                [name, q(table)],
            )
            if valid and valid[0][0]:
                continue
            if valid:  # left invalid by a build that was killed
                self.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {q(name)}")
            self.execute(create_sql(built, self.converted(table), []))
        with transaction.atomic(using=self.using):
            self.done_step(number)

    def _constraints_of(self, table: str) -> dict[str, bool]:
        found = self.rows(
            "SELECT conname, convalidated FROM pg_constraint WHERE conrelid = %s::regclass",
            [q(table)],
        )
        return {str(name): bool(valid) for name, valid in found}

    def step_constraints(self, number: int, table: str) -> None:
        """Copies of ``table``'s keys and checks, NOT VALID, then validated as the original."""
        built = self.plan.built_of(table, "foreign key", "check")
        existing = self._constraints_of(table)
        todo = [
            create_sql(b, self.converted(b.table), self.converted(b.target))
            for b in built
            if shadow(b.name) not in existing
        ]

        def work(cursor: Any) -> None:
            for sql in todo:
                cursor.execute(sql)

        self.short(self.journal.step, work)  # the copies, not yet valid
        existing = self._constraints_of(table)
        for b in built:
            if b.validated and not existing.get(shadow(b.name)):
                self.execute(f"ALTER TABLE {q(table)} VALIDATE CONSTRAINT {q(shadow(b.name))}")
        with transaction.atomic(using=self.using):
            self.done_step(number)

    step_foreign_keys = step_constraints  # a journal written before checks were copied

    def step_swap(self, number: int, table: str) -> None:
        self._compare_values(table)
        self._compare_copies(table)
        order = [s.table for s in self.plan.steps if s.action == "swap"]
        self.short(number, Swap(self.plan, table, order).work)

    def _compare_values(self, table: str) -> None:
        """Refuse the swap while a shadow differs (the next run copies those rows again)."""
        columns = self.converted(table)
        differs = " OR ".join(f"{q(shadow(c))} IS DISTINCT FROM {q(c)}" for c in columns)
        sets = ", ".join(f"{q(shadow(c))} = {q(c)}" for c in columns)
        recopy = list(self.journal.progress.get("recopy", []))
        if table in recopy:
            self.execute(f"UPDATE {q(table)} SET {sets} WHERE {differs}")
            recopy.remove(table)
            self.save(recopy=recopy)
        (count,) = self.rows(f"SELECT count(*) FROM {q(table)} WHERE {differs}")[0]
        if count:
            self.save(recopy=[*recopy, table])
            raise AdoptionError(
                f"{count} rows of {table} differ from their shadow columns ({', '.join(columns)}): "
                "written while the copying trigger was disabled? Nothing was swapped. Run again: "
                "those rows are copied again, and compared, before the swap."
            )

    def _compare_copies(self, table: str) -> None:
        """Refuse the swap unless each copy defines what its original defines."""
        names = [c.column for t in self.plan.tables for c in self.plan.columns_of(t)]
        shown = dict(self.rows("SELECT x, quote_ident(x) FROM unnest(%s::text[]) x", [names]))
        back = {shadow(name): shown[name] for name in names}
        wrong = []
        for built in self.plan.facts.rebuilt:
            if table not in (built.table, built.target) or built.kind == "exclusion":
                continue
            copy = self._copy_of(built)
            if copy is None or not same_definition(built, copy, lambda t: rename_columns(t, back)):
                wrong.append(f"{built.kind} {built.name} of {built.table}: {copy or 'missing'}")
        if wrong:
            raise AdoptionError(
                "The copies on the shadow columns do not define what their originals define; "
                f"nothing was swapped: {'; '.join(wrong)}. Run --undo and then the switch again."
            )

    def _copy_of(self, built: Built) -> str | None:
        if built.kind in ("index", "unique", "primary key"):
            found = self.rows(
                "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c "
                "ON c.oid = i.indexrelid WHERE c.relname = %s AND i.indrelid = %s::regclass",
                [shadow(built.name), q(built.table)],
            )
        else:
            found = self.rows(
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = %s "
                "AND conrelid = %s::regclass",
                [shadow(built.name), q(built.table)],
            )
        return str(found[0][0]) if found else None

    def step_drop_identity(self, number: int, table: str) -> None:
        column = self.plan.facts.column

        def work(cursor: Any) -> None:
            cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [q(table), column])
            sequence = cursor.fetchone()[0]
            cursor.execute(
                f"ALTER TABLE {q(table)} ALTER COLUMN {q(column)} DROP IDENTITY IF EXISTS"
            )
            cursor.execute(f"ALTER TABLE {q(table)} ALTER COLUMN {q(column)} DROP DEFAULT")
            if sequence:
                cursor.execute(f"DROP SEQUENCE IF EXISTS {sequence}")

        self.short(number, work)

    def step_compare(self, number: int, table: str) -> None:
        """Refuse to finish unless the catalog holds what it held before."""
        before = self.journal.progress.get("catalog")
        if before is not None:
            after = catalog.snapshot(self.connection, self.tables())
            widened = [(c.table, c.column) for c in self.plan.facts.columns if c.rewrite]
            facts = self.plan.facts
            changed = catalog.differences(before, after, widened, (facts.table, facts.column))
            if changed:
                raise AdoptionError(
                    "The catalog differs from the one before the switch (integer -> bigint "
                    f"aside): {'; '.join(changed)}. Put it right and run again: the switch "
                    "finishes once nothing differs."
                )
        with transaction.atomic(using=self.using):
            self.done_step(number)

    # ---------------------------------------------------------------- undo
    def undo(self) -> None:
        """Take back every step before the first swap, under ``lock_timeout``, retried."""
        swaps = [s.number for s in self.plan.steps if s.action == "swap"]
        if swaps and self.journal.step >= swaps[0]:
            raise AdoptionError(
                f"{self.plan.facts.label}: the swap has begun; the way back is a migration back "
                "to AutoField/BigAutoField."
            )
        for built in self.plan.facts.rebuilt:
            if built.kind in ("foreign key", "check"):
                name = q(shadow(built.name))
                self._undo(f"ALTER TABLE {q(built.table)} DROP CONSTRAINT IF EXISTS {name}")
            elif built.kind != "exclusion":
                self._undo(
                    f"DROP INDEX CONCURRENTLY IF EXISTS {q(shadow(built.name))}", atomic=False
                )
        for table in self.plan.tables:
            function = q(trigger_name(table))
            self._undo(f"DROP TRIGGER IF EXISTS {function} ON {q(table)}")
            self._undo(f"DROP FUNCTION IF EXISTS {function}()")
            for c in self.plan.columns_of(table):
                self._undo(f"ALTER TABLE {q(table)} DROP COLUMN IF EXISTS {q(shadow(c.column))}")

    def _undo(self, sql: str, *, atomic: bool = True) -> None:
        self.retried(lambda cursor: cursor.execute(sql), atomic=atomic)
