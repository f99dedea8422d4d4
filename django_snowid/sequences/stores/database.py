"""The database sequence store, and the marks both stores keep in the database (one
atomic upsert raises a mark and returns it). ``SequenceMark`` is imported where it is
used: this module may be imported before the app registry is ready."""

from __future__ import annotations

import time
from typing import Any

from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    connections,
    router,
    transaction,
)

from ...db.connections import own_connection
from ...db.errors import is_lock_refusal, is_missing_table
from ...db.private import kept_cursor
from ...db.returning import built, execute, returned, returning
from ...db.tables import missing_message
from ...exceptions import InvalidSequence, SequenceLocked, SequenceUnavailable
from ...stores.base import Needs
from ..spec import SequenceSpec
from .base import Clock, stored_name

__all__ = [
    "NO_FLOOR",
    "DatabaseSequenceStore",
    "advance",
    "advance_committed",
    "delete_mark",
    "draw",
    "read_mark",
    "read_marks",
]

#: A floor below every mark: ``max(mark, NO_FLOOR)`` is the mark.
NO_FLOOR = -(2**62)


def _statement(connection: Any) -> str:
    from ..models import SequenceMark

    qn = connection.ops.quote_name
    table, name, value = qn(SequenceMark._meta.db_table), qn("name"), qn("value")
    greatest = "MAX" if connection.vendor == "sqlite" else "GREATEST"
    raised = returned(connection, f"{greatest}({table}.{value}, %s) + %s")
    if connection.vendor == "mysql":
        upsert = f"ON DUPLICATE KEY UPDATE {value} = {raised}"
    else:
        upsert = f"ON CONFLICT ({name}) DO UPDATE SET {value} = {raised}"
    return (
        f"INSERT INTO {table} ({name}, {value}) VALUES (%s, {returned(connection, '%s')}) "
        f"{upsert}{returning(connection, value)}"
    )


def advance(connection: Any, name: str, *, floor: int, by: int, first: int | None = None) -> int:
    """Raise mark ``name`` to ``max(mark, floor) + by`` (new: ``first``) in one statement, in
    ``connection``'s transaction; returns the new mark."""
    sql = built(connection, "sequence-advance", _statement)
    mark = execute(connection, sql, [name, floor + by if first is None else first, floor, by])
    assert mark is not None  # an upsert always writes its row
    return mark


def _lock_nowait(connection: Any, name: str) -> None:
    """Take the sequence's lock now, or raise :class:`SequenceLocked` at once (SQLite: the
    database's write lock)."""
    from ..models import SequenceMark

    qn = connection.ops.quote_name
    table = qn(SequenceMark._meta.db_table)
    where = f"WHERE {qn('name')} = %s"
    try:
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            if connection.vendor != "sqlite":
                cursor.execute(f"SELECT 1 FROM {table} {where} FOR UPDATE NOWAIT", [name])
                return
            cursor.execute("PRAGMA busy_timeout")
            (timeout,) = cursor.fetchone()
            cursor.execute("PRAGMA busy_timeout = 0")
            try:
                value = qn("value")
                cursor.execute(f"UPDATE {table} SET {value} = {value} {where}", [name])
            finally:
                cursor.execute(f"PRAGMA busy_timeout = {int(timeout)}")
    except OperationalError as exc:
        if not is_lock_refusal(connection, exc):
            raise
        raise SequenceLocked(
            f"The sequence {name!r} is held by another transaction and nowait=True: "
            "nothing was issued. Retry once that transaction ends, or call without nowait "
            "to wait for it."
        ) from exc


def draw(connection: Any, spec: SequenceSpec, name: str, count: int, *, nowait: bool) -> range:
    """``count`` values of ``spec`` stored under ``name``, in the caller's transaction; the
    database's errors are left as they are."""
    step, reset = spec.step, spec.reset
    floor = spec.start - step if spec.lift else NO_FLOOR
    first = spec.start + (count - 1) * step  # a new sequence's last value of this block
    if reset is not None and count != 1:
        raise InvalidSequence(
            f"reset_value={reset}: a cycling sequence issues one value at a time."
        )
    if not nowait and reset is None:  # one statement: atomic on its own
        last = advance(connection, name, floor=floor, by=count * step, first=first)
        return range(last - (count - 1) * step, last + 1, step)
    locked = None
    with transaction.atomic(using=connection.alias, savepoint=False):
        try:
            if nowait:
                _lock_nowait(connection, name)
        except SequenceLocked as exc:
            # Raised outside the block, which would mark the caller's transaction for rollback.
            locked = exc
        else:
            last = advance(connection, name, floor=floor, by=count * step, first=first)
            if reset is not None and last >= reset:
                _set_mark(connection, name, spec.start)
                last = spec.start
    if locked is not None:
        raise locked
    return range(last - (count - 1) * step, last + 1, step)


def _set_mark(connection: Any, name: str, value: int) -> None:
    from ..models import SequenceMark

    qn = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {qn(SequenceMark._meta.db_table)} SET {qn('value')} = %s "
            f"WHERE {qn('name')} = %s",
            [value, name],
        )


def _select(connection: Any) -> str:
    from ..models import SequenceMark

    qn = connection.ops.quote_name
    table = qn(SequenceMark._meta.db_table)
    return f"SELECT {qn('value')} FROM {table} WHERE {qn('name')} = %s"


def read_mark(connection: Any, name: str) -> int | None:
    """The mark of one stored name; ``None`` if there is none."""
    cursor = kept_cursor(connection)
    cursor.execute(built(connection, "sequence-read", _select), [name])
    rows = cursor.fetchall()  # to the end: SQLite ends the statement (and its read lock)
    return int(rows[0][0]) if rows else None


def delete_mark(connection: Any, name: str) -> bool:
    """Delete one stored name's mark; True if there was one."""
    from ..models import SequenceMark

    qn = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {qn(SequenceMark._meta.db_table)} WHERE {qn('name')} = %s", [name]
        )
        return bool(cursor.rowcount)


def mark_connection(using: str | None) -> Any:
    """This thread's own connection to the marks' database, outside the caller's
    transactions: a mark is committed before Redis hands out values under it."""
    from ..models import SequenceMark

    return own_connection(using or router.db_for_write(SequenceMark))


def advance_committed(using: str | None, name: str, *, floor: int, by: int) -> int:
    """:func:`advance` on a connection of its own, committed when it returns."""
    connection = mark_connection(using)
    try:
        return advance(connection, name, floor=floor, by=by)  # autocommit: committed here
    except DatabaseError as exc:
        connection.close()  # a broken connection is opened again next time
        raise _refusal(connection.alias, exc, f"so the mark of the sequence {name!r}") from exc


def _refusal(alias: str, exc: DatabaseError, what: str = "") -> Exception:
    """Our error for a missing mark table or an unreachable database; else ``exc``."""
    from ..models import SequenceMark

    if is_missing_table(exc):
        table = SequenceMark._meta.db_table
        return SequenceUnavailable(missing_message(table, alias, "no sequence value is issued"))
    if isinstance(exc, OperationalError | InterfaceError):
        raised = f", {what} could not be raised" if what else ""
        return SequenceUnavailable(
            f"The database {alias!r} is unreachable{raised}: {exc}. Nothing was issued."
        )
    return exc


def read_marks(using: str | None = None) -> dict[str, int]:
    """Every mark, by stored name (``name`` or ``name:YYYYMMDD``)."""
    from ..models import SequenceMark

    alias = using or router.db_for_write(SequenceMark)
    return dict(SequenceMark.objects.using(alias).values_list("name", "value"))


class DatabaseSequenceStore:
    """Values straight from the mark table, in the caller's transaction: gapless, one
    writer at a time."""

    name = "database"
    needs = Needs(tables=("snowid_sequences.SequenceMark",))
    #: Values come straight from the mark: there is no mark to raise ahead of demand.
    raises_ahead = False

    def __init__(self, clock: Clock = time.time) -> None:
        self.clock = clock

    def describe(self) -> str:
        return "the database"

    def after_fork(self) -> None:
        pass

    def _where(self, spec: SequenceSpec, using: str | None, now: float | None) -> tuple[str, str]:
        from ..models import SequenceMark

        alias = using or router.db_for_write(SequenceMark)
        name = spec.name
        if spec.daily:
            name = stored_name(spec, self.clock() if now is None else now)
        return alias, name

    def next_values(
        self,
        spec: SequenceSpec,
        count: int,
        using: str | None,
        now: float | None = None,
        *,
        nowait: bool = False,
    ) -> range:
        """Values of the day of ``now`` (default: the store's clock) for a daily sequence."""
        alias, name = self._where(spec, using, now)
        try:
            if spec.plain and not nowait:
                last = advance(connections[alias], name, floor=spec.start - 1, by=count)
                return range(last - count + 1, last + 1)
            return draw(connections[alias], spec, name, count, nowait=nowait)
        except DatabaseError as exc:
            raise _refusal(alias, exc) from exc

    def last_value(
        self, spec: SequenceSpec, using: str | None, now: float | None = None
    ) -> int | None:
        """The last value issued (of the day of ``now``); ``None`` if the sequence has none."""
        alias, name = self._where(spec, using, now)
        return read_mark(connections[alias], name)

    def delete(self, spec: SequenceSpec, using: str | None, now: float | None = None) -> bool:
        """Delete the sequence, in the caller's transaction; True if it existed."""
        alias, name = self._where(spec, using, now)
        return delete_mark(connections[alias], name)

    def continue_above(self, spec: SequenceSpec, stored: str, value: int, using: str | None) -> int:
        """Make the sequence continue above ``value``; returns the last value now."""
        from ..models import SequenceMark

        alias = using or router.db_for_write(SequenceMark)
        return advance(connections[alias], stored, floor=value, by=0)
