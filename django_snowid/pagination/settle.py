"""How far a feed is settled: the id below which no running transaction can commit a
row (PostgreSQL: its oldest running transaction less a margin; elsewhere a window)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from django.db import connections

from ..conf import conf
from ..core.layout import Layout
from ..db.private import kept_cursor
from ..exceptions import SettledBoundError

__all__ = ["Settled", "settled"]

#: The client sessions of this database but ours, by the per-backend functions (the
#: pg_stat_activity view costs twice as much); other roles' are hidden from a role that
#: is neither theirs nor a member of pg_read_all_stats.
_OLDEST_TRANSACTION = """
SELECT least(clock_timestamp(), min(pg_stat_get_backend_xact_start(b))
                                FILTER (WHERE pg_stat_get_backend_client_port(b) IS NOT NULL)),
       CASE WHEN pg_has_role('pg_read_all_stats', 'USAGE') THEN 0
            ELSE count(*) FILTER (WHERE NOT pg_has_role(pg_stat_get_backend_userid(b), 'USAGE'))
       END,
       current_setting('transaction_isolation'),
       pg_is_in_recovery()
FROM pg_stat_get_backend_idset() b
WHERE pg_stat_get_backend_dbid(b) = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND pg_stat_get_backend_pid(b) <> pg_backend_pid()
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


def _from_postgresql(connection: Any, now_ns: int) -> tuple[datetime, str]:
    cursor = kept_cursor(connection)  # a new cursor would cost more than the query
    if connection.in_atomic_block:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # read afresh, not cached
    cursor.execute(_OLDEST_TRANSACTION)
    oldest, hidden, isolation, replica = cursor.fetchone()
    if replica:
        raise SettledBoundError(
            "This database is a replica: transactions of the primary are not visible here. "
            "Read the feed on the primary (queryset.using(...))."
        )
    if connection.in_atomic_block and isolation != "read committed":
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
