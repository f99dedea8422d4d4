"""What every worker-id lease store provides, and what it answers.

Every store hands out the lowest free worker id of a pool atomically, renews and releases
it for the holder that owns its token, and remembers per worker id the latest time its
holders may have issued ids in (the *horizon*, an absolute Unix time in ms: a tick means
nothing without its epoch and unit), also after the lease is gone: a new holder issues
nothing until its clock has passed it. Each lease also records the name of the layout
its holder issues ids of, so that a layout whose node bits moved can be told apart.

A store also says what it guarantees when a holder stops without a word (``SIGKILL``,
a lost host): whether the id is free for a newcomer at once or only once the holder's
record expired (``frees_at_once``), and whether it can lose its records
(``can_forget``). The holder (``lease.LeaseHolder``) asks these, never a store's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol

from ...core.layout import iso_utc
from ...exceptions import WorkerPoolExhausted
from ...stores.base import Store

__all__ = ["Acquired", "LeaseInfo", "LeaseRequest", "LeaseStore", "StoreSettling", "exhausted"]


class StoreSettling(Exception):
    """The store lost its records (or never had any) less than a lease's time-to-live
    plus fencing margin ago: a holder from before may still issue under any worker id
    until it re-asserts its lease or fences itself. Ask again after ``wait_ms``.

    ``until_ms`` (Unix ms, the store's clock; -1 if unknown) is when the last of ``pools``
    (the pool asked for, and the request's ``companions`` that settle too) hands out
    worker ids again."""

    def __init__(self, wait_ms: int, until_ms: int = -1, pools: tuple[str, ...] = ()) -> None:
        super().__init__(wait_ms)
        self.wait_ms = wait_ms
        self.until_ms = until_ms
        self.pools = pools


@dataclass(frozen=True)
class LeaseRequest:
    """What a process asks a store for: the lowest free worker id among ``size`` ids of
    ``pool`` from ``first``, held under ``token`` for ``ttl_ms`` (0 for lock files).

    ``horizon_ms`` is what the new holder records as it takes the id, in the same write:
    a time ahead of every id it may issue before it records again. The store keeps the
    larger of it and the previous holders' horizon, and answers with the latter."""

    pool: str
    size: int
    owner: str  # host:pid, for people reading the leases
    token: str  # proves the holder on renew and release
    ttl_ms: int
    first: int = 0
    layout: str = ""  # the name of the layout its holder issues ids of
    horizon_ms: int = -1
    #: Other pools this process leases from: a store that makes newcomers wait after it
    #: lost its records starts their waits with this one's, so that they run together.
    companions: tuple[str, ...] = ()

    @property
    def workers(self) -> range:
        return range(self.first, self.first + self.size)


@dataclass(frozen=True)
class Acquired:
    worker: int  # the leased node value, first <= worker < first + pool size
    horizon_ms: int  # Unix ms up to which previous holders may have issued; -1 if unknown


#: ``LeaseInfo.expires_ms`` of a lock file: held while its process lives, never expiring.
WHILE_ALIVE = -1
#: ``expires_ms`` of a record that never expires (a database's reserved node value).
NEVER_EXPIRES = 2**62


@dataclass(frozen=True)
class LeaseInfo:
    pool: str
    worker: int
    owner: str
    acquired_ms: int
    expires_ms: int
    horizon_ms: int
    layout: str = ""  # the name of the layout its holder issues ids of

    def live(self, now_ms: int) -> bool:
        return self.expires_ms == WHILE_ALIVE or self.expires_ms > now_ms


class LeaseStore(Store, Protocol):
    #: True: a holder that dies without a word frees its id at once (a lock file, which
    #: the kernel releases with its process), long before any record of it could expire.
    #: Its holder keeps the horizon ahead of every tick it enters, since the next holder
    #: may start the moment it dies; the lease never expires by itself, so a holder that
    #: fences itself gives the id back. False: the id stays taken until the holder's
    #: record expires (its time-to-live), and the holder's fence stops it before then.
    frees_at_once: bool
    #: True: the store can lose its records (a flush, a restart without persistence, a
    #: failover to an empty replica). A holder that finds no horizon for its id then
    #: bounds its ticks by the newest id of its layout in the database.
    can_forget: bool

    def acquire(self, request: LeaseRequest) -> Acquired: ...

    def renew(
        self, pool: str, worker: int, token: str, ttl_ms: int, horizon_ms: int, *, layout: str = ""
    ) -> bool:
        """Extend the lease of ``token`` by ``ttl_ms`` and raise its horizon to
        ``horizon_ms`` (never lower it); False, writing nothing, if the lease is not ours."""
        ...

    def release(self, pool: str, worker: int, token: str, horizon_ms: int) -> None:
        """Give the lease of ``token`` back, recording ``horizon_ms`` as its horizon: the
        end of the last tick its holder really used, which may be below the horizon it
        recorded ahead (a restart need not wait for ticks nobody used)."""
        ...

    def leases(self, pool: str | None = None) -> list[LeaseInfo]: ...


def exhausted(pool: str, size: int, live: int) -> WorkerPoolExhausted:
    return WorkerPoolExhausted(
        f"Worker-id pool {pool!r} is exhausted: all {size} worker ids are leased "
        f"({live} live leases). Stop some processes, wait for dead ones' leases to expire, "
        "or use a layout with more node bits (SNOWID_WORKER_POOL_SIZE limits the pool)."
    )


def horizon_text(horizon_ms: int) -> str:
    """A horizon as people read it: UTC, to the millisecond ("-" when none is known)."""
    if horizon_ms < 0:
        return "-"
    return iso_utc(datetime.fromtimestamp(horizon_ms / 1000, tz=timezone.utc), milliseconds=True)


def expires_in_s(lease: LeaseInfo, now_ms: int) -> float | str:
    """Seconds until ``lease`` expires; else what holds it (a lock file), or that it was
    released (its holder gave it back) or has expired."""
    if lease.expires_ms == WHILE_ALIVE:
        return "while its process lives"
    if lease.expires_ms >= NEVER_EXPIRES:
        return "never"
    if lease.expires_ms == 0:
        return "released"
    if lease.expires_ms <= now_ms:
        return f"expired {(now_ms - lease.expires_ms) / 1000:.1f} s ago"
    return round((lease.expires_ms - now_ms) / 1000, 1)
