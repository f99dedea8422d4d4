"""Holding a worker-id lease: acquire, heartbeat, fence, release, and survive forks.

Fencing: a lease renewed at monotonic time ``t`` is trusted until ``t + ttl - margin``;
past that the generator refuses to enter a new tick (``WorkerLeaseLost``), so no id is
ever issued under an expired lease, however long the store stays unreachable.

Restart safety: every heartbeat records in the store the highest tick this holder may
reach before it fences itself (the tick of ``now + ttl``), and a graceful release records
the last tick it really used. A new holder of the worker id issues nothing until its
clock has passed that tick: it waits for small gaps and refuses large ones.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import socket
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..conf import conf
from ..core.generator import Clock, SnowflakeGenerator
from ..core.layout import Layout
from ..exceptions import WorkerIdError, WorkerLeaseLost
from .stores import DatabaseLeaseStore, LeaseStore, RedisLeaseStore, SlotStore

__all__ = [
    "LEASE_SOURCES",
    "PoolSpec",
    "WorkerLease",
    "get_lease_store",
    "lease_generator",
    "pool_for",
]

LEASE_SOURCES = ("slot", "redis", "database")


@dataclass(frozen=True)
class PoolSpec:
    """The worker ids one process may lease for a layout: the last node part is leased,
    the other parts are fixed by ``SNOWID_WORKER_ID`` (e.g. the datacenter)."""

    name: str
    size: int
    layout: Layout
    fixed: tuple[tuple[str, int], ...]

    def node(self, worker: int) -> int:
        if not self.fixed and len(self.layout.node_parts) <= 1:
            return self.layout.node_value(worker) if self.layout.node_parts else 0
        leased = self.layout.node_parts[-1].name
        return self.layout.node_value({**dict(self.fixed), leased: worker})


def pool_for(layout: Layout, key: str, worker_setting: int | Mapping[str, int]) -> PoolSpec:
    parts = layout.node_parts
    if not parts:
        raise WorkerIdError(f"Layout {layout.name!r} has no node bits: nothing to lease.")
    fixed: dict[str, int] = {}
    if len(parts) > 1:
        if isinstance(worker_setting, Mapping):
            fixed = {p.name: worker_setting.get(p.name, 0) for p in parts[:-1]}
        else:
            split = layout.split_node(layout.node_value(worker_setting))
            fixed = {p.name: split[p.name] for p in parts[:-1]}
    size = 1 << parts[-1].bits
    if conf.WORKER_POOL_SIZE:
        size = min(size, int(conf.WORKER_POOL_SIZE))
    suffix = ",".join(f"{k}={v}" for k, v in fixed.items())
    return PoolSpec(f"{key}:{suffix}" if suffix else key, size, layout, tuple(fixed.items()))


def get_lease_store(source: str) -> LeaseStore:
    cache_key = (source, conf.REDIS_ALIAS, conf.REDIS_KEY_PREFIX, conf.WORKER_SLOT_DIR)
    store = _stores.get(cache_key)
    if store is None:
        if source == "redis":
            store = RedisLeaseStore(conf.REDIS_ALIAS, conf.REDIS_KEY_PREFIX)
        elif source == "database":
            store = DatabaseLeaseStore()
        else:
            store = SlotStore(conf.WORKER_SLOT_DIR)
        store = _stores.setdefault(cache_key, store)
    return store


def database_tick_bound(layout: Layout, key: str) -> int:
    """The newest tick of any id of layout ``key`` in the database: one index lookup a
    column. Used when the lease store has no record for a worker id (Redis flushed).
    """
    from ..introspection import column_max, our_fields
    from ..orders.field import OrderNumberField

    newest = -1
    for field in our_fields():
        if isinstance(field, OrderNumberField) or (field.layout_name or "default") != key:
            continue
        largest = column_max(field)
        if largest is not None:
            newest = max(newest, layout.decode(largest).tick)
    return newest


class WorkerLease:
    def __init__(
        self,
        store: LeaseStore,
        pool: PoolSpec,
        *,
        ttl_s: float,
        clock: Clock = time.time_ns,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.pool = pool
        self.ttl_ms = int(ttl_s * 1000)
        self.clock = clock
        self.on_lost = on_lost
        self.token = secrets.token_hex(8)
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self.pid = os.getpid()
        # Fence well before the store lets anyone else take the id.
        self.margin_s = min(ttl_s / 3, 2.0)
        self.interval_s = ttl_s / 3
        self.worker = -1
        self.node = -1
        self.resume_tick = -1
        self.generator: SnowflakeGenerator | None = None
        self._valid_until = 0.0
        self._lost = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- life
    def acquire(self) -> WorkerLease:
        started = time.monotonic()
        acquired = self.store.acquire(
            self.pool.name, self.pool.size, self.owner, self.token, self.ttl_ms
        )
        self.worker = acquired.worker
        self.node = self.pool.node(acquired.worker)
        self.resume_tick = acquired.tick_bound
        self._valid_until = started + self.ttl_ms / 1000 - self.margin_s
        _held.append(self)
        return self

    def start_heartbeat(self) -> None:
        self._thread = threading.Thread(
            target=self._beat, name=f"snowid-lease-{self.pool.name}-{self.worker}", daemon=True
        )
        self._thread.start()

    def check(self) -> None:
        """The generator's guard: refuse once the lease may have expired."""
        if self._lost or time.monotonic() > self._valid_until:
            self._lost = True
            if self.on_lost is not None:
                self.on_lost()
            raise WorkerLeaseLost(
                f"The lease on worker id {self.worker} of pool {self.pool.name!r} was not "
                f"renewed within its {self.ttl_ms / 1000:g} s time-to-live (lease store "
                f"{self.store.name!r} unreachable?). No id is issued under it; the next call "
                "takes a new lease."
            )

    def tick_horizon(self) -> int:
        """The highest tick this holder may reach before it fences itself."""
        layout = self.pool.layout
        if self.store.name == "slot":  # same host, same clock: the tick really used
            return self.generator.last_tick if self.generator else self.resume_tick
        return (self.clock() + self.ttl_ms * 1_000_000 - layout.epoch_ns) // layout.unit_ns

    def _beat(self) -> None:
        from django.db import connections

        try:
            self._beat_until_stopped()
        finally:
            connections.close_all()  # this thread's own connections only

    def _beat_until_stopped(self) -> None:
        from django.db import connections

        while not self._stop.wait(self.interval_s):
            if os.getpid() != self.pid or self._lost:
                return
            sent = time.monotonic()
            try:
                renewed: bool | None = self.store.renew(
                    self.pool.name, self.worker, self.token, self.ttl_ms, self.tick_horizon()
                )
            except Exception:  # unreachable store: keep trying while the lease is trusted
                renewed = None
            if self.store.name == "database":
                connections.close_all()  # a beat every ttl / 3 keeps no connection open
            if renewed:
                self._valid_until = sent + self.ttl_ms / 1000 - self.margin_s
            elif renewed is False or time.monotonic() > self._valid_until:
                # False: the store answered that the lease is no longer ours.
                self._lost = True
                return

    def release(self) -> None:
        self._stop.set()
        if os.getpid() != self.pid or self.worker < 0:
            return
        last = self.generator.last_tick if self.generator else self.resume_tick
        # Best effort (at exit the store may be gone): the lease expires by itself.
        with contextlib.suppress(Exception):
            self.store.release(self.pool.name, self.worker, self.token, last)
        if self in _held:
            _held.remove(self)


def lease_generator(
    layout: Layout,
    key: str,
    worker_setting: int | Mapping[str, int],
    source: str,
    *,
    clock: Clock = time.time_ns,
    sleep: Callable[[float], None] = time.sleep,
    on_lost: Callable[[], None] | None = None,
    heartbeat: bool = True,
    ttl_s: float | None = None,
    **generator_options: Any,
) -> SnowflakeGenerator:
    """Take a lease on a worker id of ``layout``'s pool and build its generator.

    ``lease_of(generator)`` is the lease; releasing it retires the generator.
    """
    store = get_lease_store(source)
    pool = pool_for(layout, key, worker_setting)
    ttl = float(conf.WORKER_LEASE_TTL_S) if ttl_s is None else ttl_s
    lease = WorkerLease(store, pool, ttl_s=ttl, clock=clock, on_lost=on_lost).acquire()
    try:
        bound = lease.resume_tick
        if bound < 0 and source == "redis":
            bound = database_tick_bound(layout, key)  # the store forgot (flushed): ask the database
        gap_ms = (bound + 1) * layout.time_unit_ms - (clock() - layout.epoch_ns) / 1_000_000
        if gap_ms > 0:
            limit = float(conf.WORKER_RESUME_MAX_WAIT_MS)
            if gap_ms > limit:
                raise WorkerIdError(
                    f"Worker id {lease.worker} of pool {pool.name!r} was used up to "
                    f"{layout.time_of_tick(bound).isoformat()}, {gap_ms:.0f} ms ahead of this "
                    f"host's clock: more than SNOWID_WORKER_RESUME_MAX_WAIT_MS={limit:g}. "
                    "Check this host's clock (NTP); no id was issued."
                )
            sleep(gap_ms / 1000)
        generator = SnowflakeGenerator(
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


def lease_of(generator: SnowflakeGenerator) -> WorkerLease | None:
    return _lease_of.get(generator)


_stores: dict[tuple[str, str, str, str], LeaseStore] = {}
_held: list[WorkerLease] = []
_lease_of: weakref.WeakKeyDictionary[SnowflakeGenerator, WorkerLease] = weakref.WeakKeyDictionary()


def release_all() -> None:
    for lease in list(_held):
        lease.release()


def _after_fork_in_child() -> None:
    # The parent still holds its leases: the child forgets them (never releases them)
    # and takes its own on first use.
    _held.clear()
    for store in _stores.values():
        if isinstance(store, SlotStore):
            store.forget_after_fork()


atexit.register(release_all)
os.register_at_fork(after_in_child=_after_fork_in_child)
