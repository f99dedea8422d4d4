"""The database order store: one row per stream in a table of this app."""

from __future__ import annotations

import random
import time
from typing import Any, Final

from django.apps import apps
from django.db import OperationalError, router, transaction

from ...core.sequence import Outcome, reserve, resume
from ...exceptions import OrderNumberError, OrderNumberUnavailable, OrderTransactionConflict
from .base import MISSING, Missing, Position, RecoverArgs, ReserveArgs

__all__ = ["DatabaseOrderStore", "is_contention"]

#: SQLSTATEs of a serialization failure, a deadlock victim and a lock that was not granted.
_CONTENTION_SQLSTATES: Final = frozenset({"40001", "40P01", "55P03"})
#: MySQL/MariaDB: lock wait timeout, deadlock.
_CONTENTION_ERRNOS: Final = frozenset({1205, 1213})
_OWN_TRANSACTION_TRIES: Final = 30


def is_contention(exc: BaseException) -> bool:
    """A deadlock, a lock timeout or a serialization failure: the server is reachable,
    the transaction lost a race and may be run again."""
    cause = exc.__cause__ or exc
    code = getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)
    if code in _CONTENTION_SQLSTATES:
        return True
    args = getattr(cause, "args", ())
    if args and args[0] in _CONTENTION_ERRNOS:
        return True
    return "database is locked" in str(exc)  # SQLite's busy timeout ran out


class DatabaseOrderStore:
    """The state of every stream in a table of this app, one row per stream.

    Outside a transaction a reservation reads the row and writes it back with a
    compare-and-set (``UPDATE ... WHERE second = <read> AND sequence = <read>``): two
    statements, no explicit transaction; a writer that loses the race twice takes the
    row lock. Inside a transaction it takes the row lock at once with a locking read
    (``SELECT ... FOR UPDATE``), so that under REPEATABLE READ or SERIALIZABLE it decides
    on the current row, never on the transaction's snapshot; the row stays locked until
    the transaction ends (with ATOMIC_REQUESTS, requests that issue numbers of one
    stream run one after the other). A row is created or recovered by one
    statement (an upsert), which cannot deadlock with another one creating it.

    Deadlocks, lock timeouts and serialization failures are retried when the store runs
    its own transaction; inside the caller's they raise :class:`OrderTransactionConflict`.
    """

    name = "database"

    def __init__(self, using: str | None = None) -> None:
        self.using = using

    @staticmethod
    def _model() -> Any:
        # Through the app registry: this module is imported while the models load (the
        # fields import it), before django_snowid.models can be.
        return apps.get_model("django_snowid", "OrderStreamState")

    def _db(self) -> str:
        return self.using or router.db_for_write(self._model())

    def _run(self, operation: Any, *args: Any) -> Any:
        """``operation(db, *args)``, with the database's errors made ours."""
        db = self._db()
        in_transaction = transaction.get_connection(db).in_atomic_block
        for attempt in range(_OWN_TRANSACTION_TRIES):
            try:
                return operation(db, *args)
            except OperationalError as exc:
                if not is_contention(exc):  # connection lost or refused
                    raise OrderNumberUnavailable(
                        f"The database {db!r} is unreachable for order numbers: "
                        f"{str(exc).rstrip('.')}. No order number was issued."
                    ) from exc
                if in_transaction or attempt == _OWN_TRANSACTION_TRIES - 1:
                    raise OrderTransactionConflict(
                        f"The database {db!r} reported a deadlock, a lock timeout or a "
                        f"serialization failure on the order-number state: {exc}. Nothing "
                        "was issued; roll back and run the transaction again."
                    ) from exc
                # Let the winner finish: a growing, jittered pause (at most about 75 ms).
                time.sleep(min(0.05, 0.001 * 2**attempt) * random.uniform(0.5, 1.5))
        raise AssertionError("unreachable")  # the loop returns or raises

    def reserve(self, stream: str, args: ReserveArgs) -> Outcome | Missing:
        return self._run(self._reserve, stream, *args)

    def _sql(self, connection: Any) -> dict[str, str]:
        qn = connection.ops.quote_name
        table = qn(self._model()._meta.db_table)
        name, second, sequence = qn("name"), qn("second"), qn("sequence")
        select = f"SELECT {second}, {sequence} FROM {table} WHERE {name} = %s"
        lower = f"({second} < %s OR ({second} = %s AND {sequence} < %s))"
        insert = f"INSERT INTO {table} ({name}, {second}, {sequence}) VALUES (%s, %s, %s)"
        if connection.vendor == "mysql":
            # Assignments run left to right: the condition is kept in a variable before
            # the first one changes what it reads.
            upsert = (
                f"{insert} ON DUPLICATE KEY UPDATE "
                f"{sequence} = IF(@snowid_lower := {lower}, VALUES({sequence}), {sequence}), "
                f"{second} = IF(@snowid_lower, VALUES({second}), {second})"
            )
        else:  # PostgreSQL, SQLite 3.24+
            row_second, row_sequence = f"{table}.{second}", f"{table}.{sequence}"
            upsert = (
                f"{insert} ON CONFLICT ({name}) DO UPDATE SET {second} = EXCLUDED.{second}, "
                f"{sequence} = EXCLUDED.{sequence} WHERE {row_second} < %s "
                f"OR ({row_second} = %s AND {row_sequence} < %s)"
            )
        return {
            "select": select,
            "select_locked": select if connection.vendor == "sqlite" else f"{select} FOR UPDATE",
            # SQLite has no FOR UPDATE: writing the row takes the database's write lock.
            "lock": f"UPDATE {table} SET {sequence} = {sequence} WHERE {name} = %s",
            "compare_and_set": (
                f"UPDATE {table} SET {second} = %s, {sequence} = %s "
                f"WHERE {name} = %s AND {second} = %s AND {sequence} = %s"
            ),
            "upsert": upsert,
        }

    def _reserve(
        self,
        db: str,
        stream: str,
        offset: int,
        cap: int,
        count: int,
        first_sequence: int,
        max_lead: int,
    ) -> Outcome | Missing:
        connection = transaction.get_connection(db)
        sql = self._sql(connection)
        sqlite = connection.vendor == "sqlite"

        def attempt(cursor: Any, *, locked: bool) -> Outcome | Missing | None:
            if locked and sqlite:
                cursor.execute(sql["lock"], [stream])
                if cursor.rowcount == 0:
                    return MISSING
            cursor.execute(sql["select_locked" if locked else "select"], [stream])
            row = cursor.fetchone()
            if row is None:
                return MISSING
            last = (int(row[0]), int(row[1]))
            now_float = time.time()
            state, outcome = reserve(
                last,
                int(now_float) + offset,
                int(now_float % 1 * 1000),
                cap=cap,
                count=count,
                first_sequence=first_sequence,
                max_lead=max_lead,
            )
            if state == last:  # a full second or a clock too far behind: nothing to write
                return outcome
            cursor.execute(sql["compare_and_set"], [*state, stream, *last])
            return outcome if cursor.rowcount == 1 else None

        if not connection.in_atomic_block:
            # Optimistic first: two statements, each its own transaction (so each reads
            # the current row at any isolation level). A writer that lost the race takes
            # the row lock instead, so nobody starves under contention.
            with connection.cursor() as cursor:
                for _ in range(2):
                    outcome = attempt(cursor, locked=False)
                    if outcome is not None:
                        return outcome
        with transaction.atomic(using=db), connection.cursor() as cursor:
            outcome = attempt(cursor, locked=True)
        if outcome is None:
            raise OrderNumberError(f"Stream {stream!r}: the locked state row changed under us.")
        return outcome

    def _upsert(
        self, db: str, stream: str, below: Position, target: Position
    ) -> tuple[Position | None, Position]:
        """Create the row at ``target``, or move it to ``target`` if it is below ``below``:
        one statement, which creates the row or waits for whoever is creating it."""
        connection = transaction.get_connection(db)
        sql = self._sql(connection)
        with transaction.atomic(using=db), connection.cursor() as cursor:
            # "Before" is for reports only: a plain read, because a locking read of a
            # missing row takes a gap lock in InnoDB, and two such upserts deadlock.
            cursor.execute(sql["select"], [stream])
            row = cursor.fetchone()
            cursor.execute(sql["upsert"], [stream, *target, below[0], below[0], below[1]])
            cursor.execute(sql["select_locked"], [stream])
            after = cursor.fetchone()
        before = None if row is None else (int(row[0]), int(row[1]))
        return before, (int(after[0]), int(after[1]))

    def recover(
        self, stream: str, database: Position | None, args: RecoverArgs
    ) -> tuple[Position | None, Position]:
        def operation(db: str) -> tuple[Position | None, Position]:
            now = int(time.time()) + args.offset  # the clock of this app server
            target = resume(None, database, now, first_sequence=args.first_sequence)
            # resume() in one statement: a row below the database (or, forced, below the
            # target) moves to the target; a missing row is created there.
            below = target if args.force else (database or (0, 0))
            return self._upsert(db, stream, below, target)

        return self._run(operation)

    def read(self, stream: str) -> Position | None:
        return (
            self._model()
            .objects.using(self._db())
            .filter(name=stream)
            .values_list("second", "sequence")
            .first()
        )

    def streams(self) -> list[str]:
        return list(self._model().objects.using(self._db()).values_list("name", flat=True))
