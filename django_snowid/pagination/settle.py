"""How far a feed is settled: the id below which no running transaction can commit a
row (PostgreSQL: its oldest running transaction less a margin; elsewhere a window)."""

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

#: The sessions of this database but ours; other roles' are NULL without pg_read_all_stats.
_OLDEST_TRANSACTION = """
SELECT least(clock_timestamp(), min(s.xact_start)),
       count(*) FILTER (WHERE s.backend_type IS NULL),
       current_setting('transaction_isolation'),
       pg_is_in_recovery()
FROM pg_stat_get_activity(NULL) s
WHERE s.datid = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND s.pid <> pg_backend_pid()
  AND s.backend_type IS DISTINCT FROM 'autovacuum worker'
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


def settled(layout: Layout, *, using: str, clock: Callable[[], int] = time.time_ns) -> Settled:
    """How far the table on database ``using`` is settled, in ids of ``layout``;
    ``clock`` (nanoseconds since the Unix epoch) times the settle window."""
    connection = connections[using]
    if connection.vendor == "postgresql":
        start, source = _from_postgresql(connection, clock())
    else:
        start, source = _window_start(clock()), "window"
    bound = layout.min_id_at(start)
    return Settled(id=bound, at=layout.time_of_tick(bound >> layout.time_shift), source=source)
