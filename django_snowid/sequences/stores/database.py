"""The database sequence store, and the marks both stores keep in the database: one
atomic statement raises a mark and returns it.

PostgreSQL and SQLite: ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING``; MariaDB/MySQL:
``INSERT ... ON DUPLICATE KEY UPDATE value = LAST_INSERT_ID(...)`` (see
:mod:`django_snowid.db.returning`).

``SequenceMark`` is imported where it is used: this module is imported with
``django_snowid.sequences``, which a project's models may import before the app registry
is ready, and a model class cannot be defined before then.
"""

from __future__ import annotations

import time
from typing import Any

from django.db import DatabaseError, InterfaceError, OperationalError, connections, router

from ...db.connections import own_connection
from ...db.returning import built, execute, returned, returning
from ...exceptions import SequenceUnavailable
from ..spec import SequenceSpec
from .base import Clock, stored_name

__all__ = [
    "DatabaseSequenceStore",
    "advance",
    "advance_committed",
    "read_marks",
]


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


def advance(connection: Any, name: str, *, floor: int, by: int) -> int:
    """Raise mark ``name`` to ``max(mark, floor) + by`` (a new mark: ``floor + by``).

    One statement, atomic on its own; returns the new mark. Runs in whatever transaction
    ``connection`` is in: the caller decides whether it commits with its own work.
    """
    sql = built(connection, "sequence-advance", _statement)
    mark = execute(connection, sql, [name, floor + by, floor, by])
    assert mark is not None  # an upsert always writes its row
    return mark


def mark_connection(using: str | None) -> Any:
    """This thread's own connection to the marks' database, outside every transaction of
    the caller.

    A mark published to Redis must be committed first: written in the caller's
    transaction, a rollback would take it back while Redis keeps handing out values
    under it (after a Redis loss, they would be issued again).
    """
    from ..models import SequenceMark

    return own_connection(using or router.db_for_write(SequenceMark))


def advance_committed(using: str | None, name: str, *, floor: int, by: int) -> int:
    """:func:`advance` on a connection of its own, committed when it returns."""
    connection = mark_connection(using)
    try:
        return advance(connection, name, floor=floor, by=by)  # autocommit: committed here
    except (OperationalError, InterfaceError) as exc:
        connection.close()  # a broken connection is opened again next time
        raise SequenceUnavailable(
            f"The database {connection.alias!r} is unreachable, so the mark of the sequence "
            f"{name!r} could not be raised: {exc}. Nothing was issued."
        ) from exc
    except DatabaseError:
        connection.close()
        raise


def read_marks(using: str | None = None) -> dict[str, int]:
    """Every mark, by stored name (``name`` or ``name:YYYYMMDD``)."""
    from ..models import SequenceMark

    alias = using or router.db_for_write(SequenceMark)
    return dict(SequenceMark.objects.using(alias).values_list("name", "value"))


class DatabaseSequenceStore:
    """Values straight from the mark table, in the caller's connection and transaction.

    Inside a transaction the row stays locked until it ends, and a rollback takes the
    values back: gapless, like django-sequences (and, like it, one writer at a time).
    """

    name = "database"
    #: Values come straight from the mark: there is no mark to raise ahead of demand.
    raises_ahead = False

    def __init__(self, clock: Clock = time.time) -> None:
        self.clock = clock

    def next_values(
        self, spec: SequenceSpec, count: int, using: str | None, now: float | None = None
    ) -> range:
        """Values of the day of ``now`` (default: the store's clock) for a daily sequence."""
        from ..models import SequenceMark

        alias = using or router.db_for_write(SequenceMark)
        name = spec.name
        if spec.daily:
            name = stored_name(spec, self.clock() if now is None else now)
        try:
            last = advance(connections[alias], name, floor=spec.start - 1, by=count)
        except (OperationalError, InterfaceError) as exc:
            raise SequenceUnavailable(
                f"The database {alias!r} is unreachable: {exc}. Nothing was issued."
            ) from exc
        return range(last - count + 1, last + 1)
