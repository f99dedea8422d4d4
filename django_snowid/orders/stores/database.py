"""The database order store: one row per stream in a table of this app."""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable
from typing import Any, Final

from django.apps import apps
from django.db import DatabaseError, OperationalError, connections, router, transaction

from ...core.clocks import real_time
from ...core.order_blocks import BLOCK_SHARE, Block
from ...core.order_keys import KeyRecord
from ...core.order_stream import (
    Outcome,
    Reserved,
    behind,
    keyed,
    reserve,
    reserve_block,
    resume,
)
from ...db.errors import is_contention, is_missing_table
from ...db.returning import built, execute, returned, returning
from ...db.tables import missing_message
from ...exceptions import OrderNumberUnavailable, OrderTransactionConflict
from ...stores.base import Needs
from .base import MISSING, Missing, Position, RecoverArgs, ReserveArgs

__all__ = ["DatabaseOrderStore", "claim"]

_OWN_TRANSACTION_TRIES: Final = 30


def _claim_sql(connection: Any, *, continuing: bool, keyed: bool = False) -> str:
    """One UPDATE that runs ``core.order_stream.reserve`` on the row when it grants the whole
    block, returning ``second * (cap + 1) + sequence``; ``continuing``: without the restart;
    ``keyed``: only where ``order_keys.agree`` would leave the key record as it is."""
    qn = connection.ops.quote_name
    table = qn(apps.get_model("django_snowid", "OrderStreamState")._meta.db_table)
    name, second, sequence = qn("name"), qn("second"), qn("sequence")
    continues = f"{second} >= %(now)s AND {second} <= %(horizon)s AND {sequence} <= %(room)s"
    if continuing:
        next_second, next_sequence, where = second, f"{sequence} + %(count)s", continues
    else:
        greatest = "MAX" if connection.vendor == "sqlite" else "GREATEST"
        next_second = f"{greatest}({second}, %(now)s)"
        next_sequence = (
            f"CASE WHEN {second} < %(now)s THEN %(fresh)s ELSE {sequence} + %(count)s END"
        )
        where = f"{second} < %(restart_below)s OR ({continues})"
    if keyed:
        where = (
            f"({where}) AND {qn('key_id')} = %(key_id)s AND {second} < %(key_end)s "
            f"AND COALESCE({qn('key_next')}, '') = %(key_next)s "
            f"AND COALESCE({qn('key_next_from')}, 0) = %(key_next_from)s"
        )
    if connection.vendor == "mysql":
        # Assignments run left to right: the sequence first, then the second.
        packed = returned(connection, f"{next_second} * %(m)s + {sequence}")
        assign = f"{sequence} = {next_sequence}, {second} = {packed} DIV %(m)s"
    else:  # PostgreSQL, SQLite: every assignment reads the row as it was
        assign = f"{sequence} = {next_sequence}"
        if not continuing:
            assign = f"{second} = {next_second}, {assign}"
    return (
        f"UPDATE {table} SET {assign} WHERE {name} = %(name)s AND ({where})"
        f"{returning(connection, f'{second} * %(m)s + {sequence}')}"
    )


_CLAIMS: Final = {
    (continuing, keyed): (
        f"order-{'continue' if continuing else 'claim'}{'-keyed' if keyed else ''}",
        functools.partial(_claim_sql, continuing=continuing, keyed=keyed),
    )
    for continuing in (False, True)
    for keyed in (False, True)
}


def claim(
    connection: Any,
    stream: str,
    now: int,
    args: ReserveArgs,
    *,
    continuing: bool = False,
    share: int = 1,
) -> Reserved | None:
    """Reserve ``args.wanted`` numbers of ``stream`` at second ``now`` in one statement;
    ``None`` if it changed nothing (the locked path decides)."""
    cap, count, window = args.cap, args.wanted, args.keys
    fresh = args.first_sequence - 1 + count  # the sequence after a new second's block
    needed = count * share  # the room a block needs left in its second
    params = {
        "name": stream,
        "now": now,
        "restart_below": now if args.first_sequence - 1 + needed <= cap else 0,
        "fresh": fresh,
        "count": count,
        "horizon": now + args.max_lead,  # the furthest a second may be ahead of the clock
        "room": cap - needed,  # the largest sequence a block fits after
        "m": cap + 1,
    }
    if window is not None:
        if not window.start <= now < window.end:
            return None
        params |= {
            "key_id": window.key_id,
            "key_end": window.end,
            "key_next": window.next_id,
            "key_next_from": window.end if window.next_id else 0,
        }
    sql = built(connection, *_CLAIMS[continuing, window is not None])
    packed = execute(connection, sql, params)
    if packed is None:
        return None
    second, last = divmod(packed, cap + 1)
    return Reserved(second, last - count + 1, count)


class DatabaseOrderStore:
    """The state of every stream in a table of this app, one row per stream; a reservation
    is one UPDATE, else a locking read decides."""

    name = "database"
    needs = Needs(tables=("django_snowid.OrderStreamState",))

    def __init__(self, using: str | None = None, clock: Callable[[], float] = real_time) -> None:
        self.using = using
        self.clock = clock  # the host's, whatever a test tool moved; tests set their own
        self._model_class: Any = None
        self._seconds: dict[str, int] = {}

    def describe(self) -> str:
        return "the database"

    def after_fork(self) -> None:
        pass

    def _model(self) -> Any:
        # Through the app registry: this module is imported while the models load.
        if self._model_class is None:
            self._model_class = apps.get_model("django_snowid", "OrderStreamState")
        return self._model_class

    def _db(self) -> str:
        return self.using or router.db_for_write(self._model())

    def _run(self, operation: Any, *args: Any) -> Any:
        """``operation(connection, *args)``, with the database's errors made ours."""
        db = self._db()
        connection = connections[db]
        for attempt in range(_OWN_TRANSACTION_TRIES):
            try:
                return operation(connection, *args)
            except DatabaseError as exc:
                if is_missing_table(exc):
                    table = self._model()._meta.db_table
                    raise OrderNumberUnavailable(
                        missing_message(table, db, "no order number is issued without it")
                    ) from exc
                if not isinstance(exc, OperationalError):
                    raise
                if not is_contention(exc):  # connection lost or refused
                    raise OrderNumberUnavailable(
                        f"The database {db!r} is unreachable for order numbers: "
                        f"{str(exc).rstrip('.')}. No order number was issued."
                    ) from exc
                # In the caller's transaction: the caller's to run again.
                if not transaction.get_autocommit(db) or attempt == _OWN_TRANSACTION_TRIES - 1:
                    raise OrderTransactionConflict(
                        f"The database {db!r} reported a deadlock, a lock timeout or a "
                        f"serialization failure on the order-number state: {exc}. Nothing "
                        "was issued; roll back and run the transaction again."
                    ) from exc
                time.sleep(min(0.05, 0.001 * 2**attempt) * random.uniform(0.5, 1.5))
        raise AssertionError("unreachable")  # the loop returns or raises

    def reserve(self, stream: str, args: ReserveArgs) -> Outcome | Missing:
        return self._run(self._reserve, stream, args)

    def holds_blocks(self) -> bool:
        # A caller's rollback would undo a block this process still hands out.
        try:
            return transaction.get_autocommit(self._db())
        except DatabaseError:
            return True  # unreachable: reserve_block() says so, in our words

    def reserve_block(self, stream: str, args: ReserveArgs) -> Block | Outcome | Missing:
        return self._run(self._reserve_block, stream, args)

    def _reserve_block(
        self, connection: Any, stream: str, args: ReserveArgs
    ) -> Block | Outcome | Missing:
        if args.wanted > 1 and not transaction.get_autocommit(connection.alias):
            # In the caller's transaction: one number, as reserve() does.
            args = args._replace(wanted=1)
        now_float = self.clock()
        now = int(now_float) + args.offset
        now_ms = int(now_float % 1 * 1000)
        continuing = self._seconds.get(stream, -1) >= now
        if args.wanted > 1:
            # One UPDATE for the whole block; else the locked path decides.
            block_args = args._replace(max_lead=0)
            reserved = claim(
                connection, stream, now, block_args, continuing=continuing, share=BLOCK_SHARE
            )
        else:
            reserved = claim(connection, stream, now, args, continuing=continuing)
        if reserved is not None:
            self._seconds[stream] = reserved.local_second
            second = reserved.local_second
            ms_left = (second - now) * 1000 + (1000 - now_ms)
            return Block(second, reserved.first_sequence, reserved.count, ms_left)
        return self._locked(connection, stream, args, reserve_block)

    @staticmethod
    def _sql(connection: Any) -> dict[str, str]:
        qn = connection.ops.quote_name
        table = qn(apps.get_model("django_snowid", "OrderStreamState")._meta.db_table)
        name, second, sequence = qn("name"), qn("second"), qn("sequence")
        record = ", ".join(qn(column) for column in ("key_id", "key_next", "key_next_from"))
        select = f"SELECT {second}, {sequence}, {record} FROM {table} WHERE {name} = %s"
        lower = (
            f"({second} < %(below_second)s OR ({second} = %(below_second)s "
            f"AND {sequence} < %(below_sequence)s))"
        )
        insert = (
            f"INSERT INTO {table} ({name}, {second}, {sequence}) "
            "VALUES (%(name)s, %(second)s, %(sequence)s)"
        )
        if connection.vendor == "mysql":
            # Assignments run left to right: the condition is kept before they change it.
            upsert = (
                f"{insert} ON DUPLICATE KEY UPDATE "
                f"{sequence} = IF(@snowid_lower := {lower}, %(moved_sequence)s, {sequence}), "
                f"{second} = IF(@snowid_lower, %(moved_second)s, {second})"
            )
        else:  # PostgreSQL, SQLite 3.24+
            row_second, row_sequence = f"{table}.{second}", f"{table}.{sequence}"
            upsert = (
                f"{insert} ON CONFLICT ({name}) DO UPDATE SET {second} = %(moved_second)s, "
                f"{sequence} = %(moved_sequence)s WHERE {row_second} < %(below_second)s "
                f"OR ({row_second} = %(below_second)s AND {row_sequence} < %(below_sequence)s)"
            )
        return {
            "select": select,
            "select_locked": select if connection.vendor == "sqlite" else f"{select} FOR UPDATE",
            # SQLite has no FOR UPDATE: writing the row takes the database's write lock.
            "lock": f"UPDATE {table} SET {sequence} = {sequence} WHERE {name} = %s",
            "update": f"UPDATE {table} SET {second} = %s, {sequence} = %s WHERE {name} = %s",
            "update_keyed": (
                f"UPDATE {table} SET {second} = %s, {sequence} = %s, {qn('key_id')} = %s, "
                f"{qn('key_next')} = %s, {qn('key_next_from')} = %s WHERE {name} = %s"
            ),
            "upsert": upsert,
        }

    def _reserve(self, connection: Any, stream: str, args: ReserveArgs) -> Outcome | Missing:
        now = int(self.clock()) + args.offset
        # After a number of this second the statement without the restart will do; if it
        # changes nothing, the locked path below decides.
        continuing = self._seconds.get(stream, -1) >= now
        reserved = claim(connection, stream, now, args, continuing=continuing)
        if reserved is not None:
            self._seconds[stream] = reserved.local_second
            return reserved
        return self._locked(connection, stream, args, reserve)

    def _locked(self, connection: Any, stream: str, args: ReserveArgs, step: Any) -> Any:
        """``step`` (``core.order_stream.reserve`` or ``reserve_block``), ``keyed``, under
        the row lock, on the clock read again; the new state (and record) written."""
        sql = built(connection, "order-store", self._sql)
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute(sql["lock"], [stream])
            cursor.execute(sql["select_locked"], [stream])
            row = cursor.fetchone()
            if row is None:
                return MISSING
            last, record = (int(row[0]), int(row[1])), _record(row[2:])
            now_float = self.clock()
            state, outcome = step(
                last,
                int(now_float) + args.offset,
                int(now_float % 1 * 1000),
                cap=args.cap,
                count=args.wanted,
                first_sequence=args.first_sequence,
                max_lead=args.max_lead,
            )
            state, agreed, outcome = keyed(last, record, args.keys, state, outcome)
            if agreed != record:
                cursor.execute(sql["update_keyed"], [*state, *_columns(agreed), stream])
                self._seconds[stream] = state[0]
            elif state != last:  # a full second or a clock too far behind: nothing to write
                cursor.execute(sql["update"], [*state, stream])
                self._seconds[stream] = state[0]
        return outcome

    def _upsert(
        self, connection: Any, stream: str, below: Position, target: Position, moved: Position
    ) -> tuple[Position | None, Position]:
        """Create the row at ``target``, or move it to ``moved`` if below ``below``."""
        sql = built(connection, "order-store", self._sql)
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            # A plain read: a locking read of a missing row would deadlock two upserts.
            cursor.execute(sql["select"], [stream])
            row = cursor.fetchone()
            params = {
                "name": stream,
                "second": target[0],
                "sequence": target[1],
                "below_second": below[0],
                "below_sequence": below[1],
                "moved_second": moved[0],
                "moved_sequence": moved[1],
            }
            cursor.execute(sql["upsert"], params)
            cursor.execute(sql["select_locked"], [stream])
            after = cursor.fetchone()
        before = None if row is None else (int(row[0]), int(row[1]))
        return before, (int(after[0]), int(after[1]))

    def recover(
        self, stream: str, database: Position | None, args: RecoverArgs
    ) -> tuple[Position | None, Position]:
        def operation(connection: Any) -> tuple[Position | None, Position]:
            now = int(self.clock()) + args.offset  # the clock of this app server
            if args.dry_run:  # what the statement below would make of the row
                before = self.read(stream)
                fs, force = args.first_sequence, args.force
                return before, resume(before, database, now, first_sequence=fs, force=force)
            fs = args.first_sequence
            target = resume(None, database, now, first_sequence=fs)
            # resume() in one statement: create at the target, or move a row below it.
            if args.force or database is None:
                below, moved = (target if args.force else (0, 0)), target
            else:
                below, moved = database, behind(database, now, first_sequence=fs)
            return self._upsert(connection, stream, below, target, moved)

        return self._run(operation)

    def read(self, stream: str) -> Position | None:
        return (
            self._model()
            .objects.using(self._db())
            .filter(name=stream)
            .values_list("second", "sequence")
            .first()
        )

    def keys(self, stream: str) -> KeyRecord | None:
        row = (
            self._model()
            .objects.using(self._db())
            .filter(name=stream)
            .values_list("key_id", "key_next", "key_next_from")
            .first()
        )
        return None if row is None or not row[0] else _record(row)

    def streams(self) -> list[str]:
        return list(self._model().objects.using(self._db()).values_list("name", flat=True))


def _record(columns: Any) -> KeyRecord:
    """The key record of a row's (key_id, key_next, key_next_from)."""
    key_id, next_id, next_from = columns
    return KeyRecord(key_id or "", next_id or "", int(next_from or 0))


def _columns(record: KeyRecord) -> tuple[str | None, str | None, int | None]:
    return (record.key_id or None, record.next_id or None, record.next_from or None)
