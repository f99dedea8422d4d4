"""What the health checks find, as plain findings; each probe is cheap enough for every
request of a health endpoint."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from django.db import DatabaseError, router

from .. import inventory
from ..checks import configured_layouts
from ..conf import conf
from ..exceptions import SnowidError
from ..orders.stores import ORDERS
from ..sequences.stores import SEQUENCES
from ..settings_layouts import DEFAULT
from ..stores import get_store
from ..stores import redis_client as redisclient
from ..workers.leased import database_tick_bound
from ..workers.status import lease_findings
from ..workers.stores import LEASES

__all__ = [
    "Finding",
    "clock_not_behind",
    "order_store_reachable",
    "parts_in_use",
    "redis_reachable",
    "sequence_store_reachable",
    "time_bits",
    "worker_leases",
]


@dataclass(frozen=True)
class Finding:
    """``fatal``: ids or numbers cannot be issued (or are refused) now; else: they will."""

    fatal: bool
    message: str


#: The families whose stores may keep their state in Redis, as a person calls them.
_KEPT = ((LEASES, "worker-id leases"), (ORDERS, "order numbers"), (SEQUENCES, "named sequences"))


def redis_users() -> list[str]:
    """The parts of django-snowid whose configured store keeps its state in Redis."""
    users = []
    for family, what in _KEPT:
        try:
            if family.in_use() and get_store(family).needs.redis:
                users.append(what)
        except SnowidError:
            continue  # a setting naming no store: a system check says it
    return users


def parts_in_use() -> list[str]:
    """The names of the checks (in :mod:`django_snowid.health`) this project needs."""
    parts = []
    if LEASES.in_use():
        parts.append("WorkerLease")
    if redis_users():
        parts.append("Redis")
    if inventory.fields("snowflake"):
        parts.append("ClockNotBehind")
    parts.append("TimeBits")
    if inventory.order_fields():
        parts.append("OrderNumberStore")
    if SEQUENCES.in_use():
        parts.append("SequenceStore")
    return parts


def worker_leases(now: float | None = None) -> list[Finding]:
    """This process's leases (lost, expired, renewals overdue), and the lease store."""
    return [Finding(*found) for found in lease_findings(now)]


def redis_reachable() -> list[Finding]:
    users = redis_users()
    try:
        redisclient.get_client().ping()
    except Exception as exc:
        return [
            Finding(
                True,
                f"Redis ({redisclient.describe()}) is unreachable ({exc}); it keeps "
                f"{', '.join(users) or 'nothing in use'}, which refuse until it is back. "
                "Start it, or fix CACHES / SNOWID_REDIS_ALIAS; after it comes back empty "
                "the streams and sequences recover from the database by themselves.",
            )
        ]
    return []


def clock_not_behind(clock: Callable[[], int] = time.time_ns) -> list[Finding]:
    """This host's clock against the newest id of each layout in the database."""
    by_layout: dict[str, list[object]] = {}
    for field in inventory.fields("snowflake"):
        by_layout.setdefault(getattr(field, "layout_name", None) or DEFAULT, []).append(field)
    layouts = {layout.name: layout for layout in configured_layouts()[0]}
    fatal_ms = max(float(conf.WORKER_RESUME_MAX_WAIT_MS), float(conf.CLOCK_BACKWARDS_TOLERANCE_MS))
    findings = []
    for name, fields in sorted(by_layout.items()):
        layout = layouts.get(name)
        if layout is None:
            continue  # a system check says what is wrong with it
        try:
            newest = database_tick_bound(layout, fields)  # type: ignore[arg-type]
        except DatabaseError as exc:
            findings.append(_newest_unread(name, fields, exc))
            continue
        if newest < 0:
            continue
        behind_ms = (layout.epoch_ns + newest * layout.unit_ns - clock()) / 1_000_000
        if behind_ms > fatal_ms / 2:
            findings.append(
                Finding(
                    behind_ms > fatal_ms,
                    f"This host's clock is {behind_ms:.0f} ms behind the newest id of layout "
                    f"{name!r} in the database ({layout.time_of_tick(newest).isoformat()}): "
                    "a worker id last used there waits for the clock, and refuses beyond "
                    f"SNOWID_WORKER_RESUME_MAX_WAIT_MS={fatal_ms:g}. Check this host's time "
                    "synchronisation (NTP, e.g. chronyc tracking).",
                )
            )
    return findings


def _newest_unread(name: str, fields: list[Any], exc: DatabaseError) -> Finding:
    where = sorted({router.db_for_read(f.model) for f in fields})
    return Finding(
        True,
        f"The newest ids of layout {name!r} could not be read from the database "
        f"{', '.join(map(repr, where))} ({type(exc).__name__}: {exc}): this check "
        "cannot tell whether this host's clock is behind them. Bring the database "
        "back, or check DATABASES.",
    )


def time_bits(clock: Callable[[], float] = time.time) -> list[Finding]:
    horizon = conf.HEALTH_TIME_BITS_HORIZON
    if not isinstance(horizon, timedelta):
        horizon = timedelta(days=5 * 365)  # E702 says what is wrong with the setting
    now = datetime.fromtimestamp(clock(), tz=timezone.utc)
    findings = []
    for layout in configured_layouts()[0]:
        left = layout.exhausted_at - now
        if left <= timedelta(0):
            findings.append(
                Finding(
                    True,
                    f"The time bits of layout {layout.name!r} ran out at "
                    f"{layout.exhausted_at.isoformat()}: no id of it can be issued. Move to a "
                    "layout with a later epoch or more time bits.",
                )
            )
        elif left < horizon:
            findings.append(
                Finding(
                    False,
                    f"The time bits of layout {layout.name!r} run out at "
                    f"{layout.exhausted_at.isoformat()}, in {left.days} days (within "
                    f"SNOWID_HEALTH_TIME_BITS_HORIZON, {horizon.days} days): plan the move "
                    "to a layout with a later epoch or more time bits before then.",
                )
            )
    return findings


def order_store_reachable() -> list[Finding]:
    from ..orders.status import store_findings

    return [Finding(*found) for found in store_findings()]


def sequence_store_reachable() -> list[Finding]:
    from ..sequences.status import store_findings

    return [Finding(*found) for found in store_findings()]
