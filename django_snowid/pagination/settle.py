"""How far a feed is settled: the id below which no transaction still running can commit
a row.

PostgreSQL tells it: every transaction that can still commit is in ``pg_stat_activity``
with its start, from before its first statement until after its commit is visible to new
snapshots; an id is drawn in that transaction or at most ``SNOWID_FEED_SETTLE_MARGIN_MS``
before it began. Elsewhere, and for sessions PostgreSQL hides from the app's role, ids
settle ``SNOWID_FEED_SETTLE_WINDOW_S`` after they were drawn.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from django.db import connections

from ..conf import conf
from ..core.layout import Layout
from ..exceptions import SettledBoundError

__all__ = ["Settled", "settled"]

#: Every session of this database that can still commit, but our own; PostgreSQL hides
#: the columns of other roles' sessions (NULL) from a role without pg_read_all_stats.
_OLDEST_TRANSACTION = """
SELECT least(clock_timestamp(), min(a.xact_start)),
       count(*) FILTER (WHERE a.backend_type IS NULL),
       current_setting('transaction_isolation'),
       pg_is_in_recovery()
FROM pg_stat_activity a
WHERE a.datname = current_database()
  AND a.pid <> pg_backend_pid()
  AND a.backend_type IS DISTINCT FROM 'autovacuum worker'
"""


@dataclass(frozen=True)
class Settled:
    """Every id below ``id`` that will ever be committed is committed; ``at`` is the
    instant ``id`` starts, ``source`` how it was found (``"database"`` or ``"window"``)."""

    id: int
    at: datetime
    source: str


def _window_start(now_ns: int) -> datetime:
    moment = datetime.fromtimestamp(now_ns / 1e9, timezone.utc)
    return moment - timedelta(seconds=float(conf.FEED_SETTLE_WINDOW_S))


def _from_postgresql(connection: object, now_ns: int) -> tuple[datetime, str]:
    with connection.cursor() as cursor:  # type: ignore[attr-defined]
        if connection.in_atomic_block:  # type: ignore[attr-defined]
            cursor.execute("SELECT pg_stat_clear_snapshot()")  # read afresh, not cached
        cursor.execute(_OLDEST_TRANSACTION)
        oldest, hidden, isolation, replica = cursor.fetchone()
    if replica:
        raise SettledBoundError(
            "This database is a replica: transactions of the primary are not visible here. "
            "Read the feed on the primary (queryset.using(...))."
        )
    if connection.in_atomic_block and isolation != "read committed":  # type: ignore[attr-defined]
        raise SettledBoundError(
            f"The feed runs in a {isolation.upper()} transaction, whose snapshot may be "
            "older than the settled bound. Read it in autocommit or at READ COMMITTED."
        )
    start = oldest - timedelta(milliseconds=float(conf.FEED_SETTLE_MARGIN_MS))
    if hidden:
        return min(start, _window_start(now_ns)), "window"
    return start, "database"


def settled(
    layout: Layout, *, using: str, clock: Callable[[], int] = time.time_ns
) -> Settled:
    """How far the table on database ``using`` is settled, in ids of ``layout``;
    ``clock`` (nanoseconds since the Unix epoch) times the settle window."""
    connection = connections[using]
    if connection.vendor == "postgresql":
        start, source = _from_postgresql(connection, clock())
    else:
        start, source = _window_start(clock()), "window"
    bound = layout.min_id_at(start)
    return Settled(id=bound, at=layout.time_of_tick(bound >> layout.time_shift), source=source)
