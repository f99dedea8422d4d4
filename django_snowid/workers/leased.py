"""A generator on a leased worker id: take the lease, wait for the clock to pass what the
worker id was used up to, build the generator the lease guards."""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.db.models import Field

from .. import metrics
from ..conf import conf
from ..core.clocks import moved_clock_hint
from ..core.generator import Clock, SnowflakeGenerator
from ..core.layout import Layout
from ..exceptions import WorkerIdError
from ..inventory import column_max
from .lease import LeaseHolder, logger  # its lines, under the lease's logger
from .pool import pool_for
from .stores import get_lease_store

__all__ = ["database_tick_bound", "lease_generator", "lease_of"]

_lease_of: weakref.WeakKeyDictionary[SnowflakeGenerator, LeaseHolder] = weakref.WeakKeyDictionary()


def lease_of(generator: SnowflakeGenerator) -> LeaseHolder | None:
    return _lease_of.get(generator)


def database_tick_bound(layout: Layout, fields: Iterable[Field]) -> int:
    """The newest tick of ``layout`` in the columns of ``fields`` (ids of that layout):
    one index lookup a column. Used when the lease store has no record for a worker id
    (Redis flushed).
    """
    newest = -1
    for field in fields:
        largest = column_max(field)
        if largest is not None:
            newest = max(newest, layout.decode(largest).tick)
    return newest


def lease_generator(
    layout: Layout,
    worker_setting: int | Mapping[str, int],
    source: str,
    *,
    fields: Iterable[Field] = (),
    clock: Clock = time.time_ns,
    sleep: Callable[[float], None] = time.sleep,
    on_lost: Callable[[], None] | None = None,
    heartbeat: bool = True,
    ttl_s: float | None = None,
    companions: Iterable[str] = (),
    lease_clocks: tuple[Clock, Callable[[], float]] | None = None,
    generator_type: Callable[..., SnowflakeGenerator] = SnowflakeGenerator,
    **generator_options: Any,
) -> SnowflakeGenerator:
    """Take a lease on a worker id of ``layout``'s pool and build its generator.

    ``fields`` hold ids of ``layout``: when the store has no record of the worker id
    (Redis flushed), the newest of them is the bound the generator starts above.
    ``companions``: the other pools this process leases from (see ``LeaseRequest``).
    ``lease_clocks``: the lease's (wall, monotonic) clocks, if not ``clock``'s.
    ``lease_of(generator)`` is the lease; releasing it retires the generator.
    """
    store = get_lease_store(source)
    pool = pool_for(layout, worker_setting)
    ttl = float(conf.WORKER_LEASE_TTL_S) if ttl_s is None else ttl_s
    others = tuple(name for name in dict.fromkeys(companions) if name != pool.name)
    wall, monotonic = lease_clocks or (clock, time.monotonic)
    holder = LeaseHolder(
        store, pool, ttl_s=ttl, clock=wall, monotonic=monotonic, on_lost=on_lost, companions=others
    )
    lease = holder.acquire()
    try:
        bound, what = _resume_bound(lease, fields)
        _wait_for_clock(lease, bound, what, wall, sleep)
        generator = generator_type(
            layout,
            lease.node,
            clock=clock,
            sleep=sleep,
            last_tick=bound,
            guard=lease.check,
            **generator_options,
        )
    except BaseException:
        lease.release()
        raise
    lease.generator = generator
    _lease_of[generator] = lease
    if heartbeat:
        lease.start_heartbeat()
    return generator


def _resume_bound(lease: LeaseHolder, fields: Iterable[Field]) -> tuple[int, str]:
    """The last tick the worker id may have been used in, and where that was read."""
    if lease.resume_tick >= 0 or not lease.store.can_forget:
        return lease.resume_tick, "the horizon its previous holders recorded in the lease store"
    layout = lease.pool.layout
    return database_tick_bound(layout, fields), (  # the store forgot: ask the database
        f"the newest id of layout {layout.name!r} in the database: the lease store had no record"
    )


def _wait_for_clock(
    lease: LeaseHolder, bound: int, what: str, clock: Clock, sleep: Callable[[float], None]
) -> None:
    """Wait until this host's clock passes the end of tick ``bound``; refuse a long wait."""
    if bound < 0:  # no tick used yet
        return
    gap_ms = lease.pool.layout.ms_after_tick(bound) - clock() / 1_000_000
    if gap_ms <= 0:
        return
    if gap_ms > float(conf.WORKER_RESUME_MAX_WAIT_MS):
        _refuse_clock_behind(lease, bound, what, gap_ms)
    metrics.count("waits", "ids", "clock_behind")
    logger.warning(
        "Clock behind: worker id %d of pool %r waits %.0f ms for this host's clock to "
        "pass the horizon its previous holder recorded.",
        lease.worker,
        lease.pool.name,
        gap_ms,
    )
    sleep(gap_ms / 1000)
    # Renewed, and recorded ahead from now: the wait used up part of the
    # time-to-live (the lease was taken with a horizon already).
    lease.record_ahead()


def _refuse_clock_behind(lease: LeaseHolder, bound: int, what: str, gap_ms: float) -> None:
    limit = float(conf.WORKER_RESUME_MAX_WAIT_MS)
    pool = lease.pool
    used_up_to = pool.layout.time_of_tick(bound).isoformat()
    metrics.refused(
        logger,
        "ids",
        "clock_behind",
        f"worker id {lease.worker} of pool {pool.name!r} was used up to "
        f"{used_up_to}, {gap_ms:.0f} ms ahead of this "
        "host's clock (more than SNOWID_WORKER_RESUME_MAX_WAIT_MS). Check NTP.",
    )
    raise WorkerIdError(
        f"Worker id {lease.worker} of pool {pool.name!r} may have been used up to "
        f"{used_up_to} ({what}), {gap_ms:.0f} ms "
        f"ahead of this host's clock: more than SNOWID_WORKER_RESUME_MAX_WAIT_MS="
        f"{limit:g}. This host's clock is behind the clock ids were issued on (an "
        "NTP step, a restored VM snapshot, a host whose clock is off): check it "
        f"(NTP). No id was issued.{moved_clock_hint()}"
    )
