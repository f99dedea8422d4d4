"""Holding a worker-id lease (acquire, heartbeat, fence, release), and this process's
leases (released at exit, forgotten in a forked child).

A lease renewed at monotonic time ``t`` is trusted until ``t + ttl - margin``; past that
no new tick is entered (``WorkerLeaseLost``). Before any tick past what the store records,
the holder records a horizon ahead (absolute Unix ms); a new holder of the id issues
nothing before its clock passes it. Layout conflicts refuse (``WorkerLayoutConflict``).
See docs/workers.rst and docs/guarantees.rst.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable

from .. import metrics
from ..core.clocks import moved_clock_hint, real_time_ns
from ..core.generator import Clock, SnowflakeGenerator
from ..exceptions import (
    WorkerIdError,
    WorkerIdUnavailable,
    WorkerLayoutConflict,
    WorkerLeaseLost,
    WorkerPoolExhausted,
)
from .heartbeat import Heartbeat
from .pool import PoolSpec
from .stores.base import (
    NEVER_EXPIRES,
    Acquired,
    LeaseRequest,
    LeaseStore,
    StoreSettling,
    horizon_text,
)

__all__ = ["LeaseHolder", "held_leases", "release_all", "waits"]

#: How soon a heartbeat that failed tries again (the regular beat: a third of the TTL).
RETRY_S = 0.5

logger = logging.getLogger(__name__)


class LeaseHolder:
    """This process's lease on one worker id of a pool, and the generator's guard."""

    def __init__(
        self,
        store: LeaseStore,
        pool: PoolSpec,
        *,
        ttl_s: float,
        clock: Clock = time.time_ns,
        monotonic: Callable[[], float] = time.monotonic,
        on_lost: Callable[[], None] | None = None,
        companions: tuple[str, ...] = (),
    ) -> None:
        self.store = store
        self.pool = pool
        self.companions = companions
        self.ttl_ms = int(ttl_s * 1000)
        self.clock = clock
        self.monotonic = monotonic
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
        #: When the store last confirmed the lease (monotonic seconds; the health check).
        self.renewed_at = 0.0
        self._lost = False
        self._released = False
        self._taken_by_another = ""
        self._recorded = -1  # the tick whose end the store records as this id's horizon
        self._asked = -1  # the horizon asked for when the lease was taken
        self._failing = False  # the last heartbeat failed
        self._heartbeat = Heartbeat(self._beat, self.interval_s)
        #: A renewal and the release never cross: one in flight would write it again.
        self._store_lock = threading.RLock()

    @property
    def lost(self) -> bool:
        """The lease was lost (fenced, or found taken by a heartbeat)."""
        return self._lost

    @property
    def released(self) -> bool:
        return self._released

    @property
    def taken_by_another(self) -> str:
        """Why the store no longer holds the lease as ours, if it said so; else empty."""
        return self._taken_by_another

    @property
    def valid_until(self) -> float:
        """Until when (monotonic seconds) the lease is trusted."""
        return self._valid_until

    def acquire(self) -> LeaseHolder:
        while True:
            started = self.monotonic()
            try:
                acquired = self._acquire_in(self.pool.size)
                break
            except WorkerIdUnavailable as exc:
                _unreachable(str(exc))
                raise
            except StoreSettling as settling:
                # Not a clock problem: the lease store lost its records. Only newcomers
                # wait; live holders re-assert their leases and keep issuing.
                self._settle(settling)
        self.worker = self.node = acquired.worker  # a node value
        self.resume_tick = self._tick_of_ms(acquired.horizon_ms)
        self._recorded = max(self.resume_tick, self._asked)  # what the store records now
        self._valid_until = started + self.ttl_ms / 1000 - self.margin_s
        self.renewed_at = started
        _held.append(self)
        metrics.count("leases_acquired", self.store.name)
        logger.info(
            "Lease acquired: worker id %d of pool %r in the %r lease store (%s).",
            self.worker,
            self.pool.name,
            self.store.name,
            self.owner,
        )
        try:
            self._refuse_another_layout_of_this_name()
        except WorkerLayoutConflict:
            self.release()
            raise
        return self

    def _settle(self, settling: StoreSettling) -> None:
        """Wait, logged and shown to the health check, until the store hands out worker ids
        of this pool (and of the companions, whose waits it started) again."""
        metrics.count("waits", "ids", "recovery")
        pools = settling.pools or (self.pool.name,)
        until = settling.until_ms
        logger.warning(
            "Lease store %r lost its records (flushed, restarted or failed over) or never had "
            "any: no worker id of pool(s) %s is handed out until %s (its clock), so that live "
            "holders re-assert their leases first; this process waits %.1f s for one.",
            self.store.name,
            ", ".join(map(repr, pools)),
            horizon_text(until),
            settling.wait_ms / 1000,
        )
        me = threading.get_ident()
        _waiting[me] = (self.store.name, self.pool.name, until)
        try:
            time.sleep(settling.wait_ms / 1000)
        finally:
            _waiting.pop(me, None)

    def _acquire_in(self, size: int) -> Acquired:
        # The horizon this holder records as it takes the id: before its first id, in
        # the same write (its fence counts from before the request).
        self._asked = self._ahead()
        try:
            request = LeaseRequest(
                self.pool.name,
                size,
                self.owner,
                self.token,
                self.ttl_ms,
                first=self.pool.first,
                layout=self.pool.layout.name,
                horizon_ms=self._ms(self._asked),
                companions=self.companions,
            )
            return self.store.acquire(request)
        except WorkerPoolExhausted:
            # A smaller pool strands nobody: while holders from a larger one live above
            # it, newcomers may take the ids that those holders' predecessors freed.
            now = _now_ms()
            top = max(
                (
                    lease.worker
                    for lease in self.store.leases(self.pool.name)
                    if lease.live(now) and lease.worker >= self.pool.first + size
                ),
                default=-1,
            )
            # Never into the node values reserved for databases.
            wider = min(top - self.pool.first + 1, self.pool.capacity - self.pool.reserved)
            if top < 0 or wider <= size:
                raise
            return self._acquire_in(wider)

    def _refuse_another_layout_of_this_name(self) -> None:
        """Refuse while live leases of a layout of this name sit in another pool: its node
        bits were elsewhere (a deploy changed them), and the two layouts' ids could collide.
        Both of two such processes starting together see each other and refuse."""
        now = _now_ms()
        name = self.pool.layout.name
        others = sorted(
            {
                lease.pool
                for lease in self.store.leases()
                if lease.layout == name
                and lease.pool != self.pool.name
                and lease.live(now)
                # A database's reservation (database ids) is re-recorded in the new pool
                # by migrate; its column default follows the layout by a migration.
                and lease.expires_ms < NEVER_EXPIRES
            }
        )
        if others:
            raise WorkerLayoutConflict(
                f"Layout {name!r} puts its node bits where pool {self.pool.name!r} says, but "
                f"live processes issue ids of a layout {name!r} from pool(s) "
                f"{', '.join(map(repr, others))}: the layout changed while processes of the "
                "old one still run, and ids of the two could collide. No id was issued; the "
                "next call tries again. Stop the processes of the old layout (their leases "
                f"end within SNOWID_WORKER_LEASE_TTL_S={self.ttl_ms / 1000:g} s), or run one "
                "layout at a time."
            )

    def start_heartbeat(self) -> None:
        self._heartbeat.start(f"snowid-lease-{self.pool.name}-{self.worker}")

    def check(self) -> None:
        """The generator's guard (before each new tick): refuse once the lease may have
        expired or was released; record a horizon ahead first if the store's record does
        not cover the tick the generator enters."""
        if self._released:
            raise self._released_error()
        if self._lost or self.monotonic() > self._valid_until:
            self._fence()
        if self._tick_now() >= self._recorded:
            self.record_ahead()

    def _released_error(self) -> WorkerLeaseLost:
        return WorkerLeaseLost(
            f"The lease on worker id {self.worker} of pool {self.pool.name!r} was "
            "released; this generator issues nothing more. Issue through "
            "django_snowid.next_id(), which takes a new lease."
        )

    def _fence(self) -> None:
        if not self._lost:
            self._report_lost()
        self._lost = True
        if self.store.frees_at_once:
            self._release(in_guard=True)  # it never expires by itself: give it back
        if self.on_lost is not None:
            self.on_lost()
        cause = self._taken_by_another or (
            f"was not renewed within its {self.ttl_ms / 1000:g} s time-to-live (lease "
            f"store {self.store.name!r} unreachable?)"
        )
        message = (
            f"The lease on worker id {self.worker} of pool {self.pool.name!r} {cause}. "
            f"No id is issued under it; the next call takes a new lease.{moved_clock_hint()}"
        )
        metrics.refused(logger, "ids", "lease_lost", message)
        raise WorkerLeaseLost(message)

    def _report_lost(self) -> None:
        metrics.count("leases_lost", self.store.name)
        logger.warning(
            "Lease lost: worker id %d of pool %r %s.",
            self.worker,
            self.pool.name,
            self._taken_by_another
            or f"was not renewed within its {self.ttl_ms / 1000:g} s time-to-live (lease "
            f"store {self.store.name!r})",
        )

    def record_ahead(self) -> None:
        """Record in the store a horizon ahead of the current tick (``_ahead``), before
        any id of that tick is issued: the store's record is never behind what this
        holder issued, even if it dies the next moment."""
        horizon = self._ahead()
        sent = self.monotonic()
        try:
            renewed = self._renew(self.ttl_ms, horizon)
        except WorkerIdError as exc:
            if isinstance(exc, WorkerIdUnavailable):
                _unreachable(str(exc))
            raise
        except Exception as exc:
            message = (
                f"The horizon of worker id {self.worker} of pool {self.pool.name!r} could "
                f"not be recorded in the {self.store.name!r} lease store ({exc}); no id was "
                "issued past what it records."
            )
            _unreachable(message)
            raise WorkerIdUnavailable(message) from exc
        metrics.observe(self.store.name, self.monotonic() - sent)
        if not renewed and self._released:
            raise self._released_error()
        if not renewed:
            self._taken_by_another = self._not_ours()
            self._fence()
        self._valid_until = sent + self.ttl_ms / 1000 - self.margin_s
        self.renewed_at = sent
        self._recorded = max(self._recorded, horizon)

    def _not_ours(self) -> str:
        return (
            f"is no longer ours in the {self.store.name!r} lease store (it expired there, or "
            "another holder took the id after the store lost its records)"
        )

    def _ahead(self) -> int:
        """The horizon to record ahead of now: a second (at least a tick) where the store
        frees a dead holder's id at once, so that a restart waits at most that long; else
        the time-to-live, past which this holder issues nothing without renewing."""
        layout = self.pool.layout
        if self.store.frees_at_once:
            return self._tick_now() + max(1, 1_000_000_000 // layout.unit_ns)
        return layout.tick_of_ns(self.clock() + self.ttl_ms * 1_000_000)

    def _tick_now(self) -> int:
        return self.pool.layout.tick_of_ns(self.clock())

    def _renew(self, ttl_ms: int, tick: int) -> bool:
        """Renew the lease with the horizon ``tick``; ``False`` once it was released."""
        with self._store_lock:
            if self._released:
                return False
            return self.store.renew(
                self.pool.name,
                self.worker,
                self.token,
                ttl_ms,
                self._ms(tick),
                layout=self.pool.layout.name,
            )

    def _ms(self, tick: int) -> int:
        """What a store records for ``tick``: the absolute time (Unix ms) it ends, which
        another project, epoch or layout reads right (a raw tick means nothing to them)."""
        if tick < 0:
            return -1
        return self.pool.layout.ms_after_tick(tick)

    def _tick_of_ms(self, ms: int) -> int:
        """The last tick of this layout that starts before the Unix time ``ms``."""
        if ms < 0:
            return -1
        return self.pool.layout.tick_before_ms(ms)

    def tick_horizon(self) -> int:
        """The horizon a heartbeat records: the highest tick this holder may reach before
        it fences itself, or, where the store frees a dead holder's id at once, what is
        recorded already (the generator's guard keeps it a second ahead)."""
        if self.store.frees_at_once:
            return self._recorded
        return self._ahead()

    def _beat(self) -> float | None:
        """One heartbeat: renew the lease; the pause before the next, ``None`` once lost."""
        if os.getpid() != self.pid or self._lost:
            return None
        sent = self.monotonic()
        horizon = self.tick_horizon()
        try:
            renewed: bool | None = self._renew(self.ttl_ms, horizon)
            metrics.observe(self.store.name, self.monotonic() - sent)
        except Exception as exc:  # unreachable store: keep trying while it is trusted
            renewed = None
            if not self._failing:  # the first failure after a success: one line
                self._failing = True
                logger.warning(
                    "Lease store %r unreachable: the heartbeat of worker id %d of pool %r "
                    "failed (%s); trying again every %g s while the lease is trusted.",
                    self.store.name,
                    self.worker,
                    self.pool.name,
                    exc,
                    min(self.interval_s, RETRY_S),
                )
        if self._released:
            return None
        if renewed:
            self._failing = False
            self._valid_until = sent + self.ttl_ms / 1000 - self.margin_s
            self.renewed_at = sent
            self._recorded = max(self._recorded, horizon)
            return self.interval_s
        if renewed is False or self.monotonic() > self._valid_until:
            # False: the store answered that the lease is no longer ours.
            if renewed is False:
                self._taken_by_another = self._not_ours()
            self._report_lost()
            self._lost = True
            return None
        # After a failure, try again soon: a failover (a new primary) or a blip must
        # not cost the lease because the next regular beat came too late.
        return min(self.interval_s, RETRY_S)

    def release(self) -> None:
        self._release(in_guard=False)

    def _release(self, *, in_guard: bool) -> None:
        self._heartbeat.stop()
        if os.getpid() != self.pid or self.worker < 0 or self._released:
            return
        with self._store_lock:
            if self._released:
                return
            self._released = True  # the generator's guard refuses from now on
            last = self.resume_tick
            if self.generator is not None:
                # The last tick used, counting one a thread is entering (its guard passed
                # before the line above); from the guard itself, no other thread can be.
                generator = self.generator
                last = max(last, generator.last_tick if in_guard else generator.last_tick_entered())
            # Best effort (at exit the store may be gone): the lease expires by itself.
            with contextlib.suppress(Exception):
                self.store.release(self.pool.name, self.worker, self.token, self._ms(last))
        if self in _held:
            _held.remove(self)


def _unreachable(message: str) -> None:
    metrics.refused(logger, "ids", "store_unreachable", message)


def _now_ms() -> int:
    """Now on the host's clock, never one a test moved."""
    return real_time_ns() // 1_000_000


_held: list[LeaseHolder] = []
#: The threads of this process waiting for a lease store to hand out worker ids again:
#: thread id -> (store, pool, until: Unix ms of the store's clock).
_waiting: dict[int, tuple[str, str, int]] = {}


def held_leases() -> list[LeaseHolder]:
    """The leases this process holds."""
    return list(_held)


def waits() -> list[tuple[str, str, int]]:
    """What this process's threads wait for: (store, pool, until: Unix ms of its clock)."""
    return sorted(set(_waiting.values()))


def release_all() -> None:
    for lease in list(_held):
        lease.release()


def _after_fork_in_child() -> None:
    # The parent still holds its leases: the child forgets them (never releases them)
    # and takes its own on first use.
    for lease in _held:
        lease._store_lock = threading.RLock()  # a parent's thread may have held it
    _held.clear()
    _waiting.clear()


atexit.register(release_all)
os.register_at_fork(after_in_child=_after_fork_in_child)
