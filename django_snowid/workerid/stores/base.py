"""What every worker-id lease store provides, and what it answers.

Every store hands out the lowest free worker id of a pool atomically, renews and releases
it for the holder that owns its token, and remembers per worker id the highest tick its
holders may have issued (``tick bound``), also after the lease is gone: a new holder must
not issue at or below it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ...exceptions import WorkerPoolExhausted

__all__ = ["Acquired", "LeaseInfo", "LeaseStore", "StoreSettling", "exhausted"]


class StoreSettling(Exception):
    """The store lost its records (or never had any) less than a lease's time-to-live
    plus fencing margin ago: a holder from before may still issue under any worker id
    until it re-asserts its lease or fences itself. Ask again after ``wait_ms``."""

    def __init__(self, wait_ms: int) -> None:
        super().__init__(wait_ms)
        self.wait_ms = wait_ms


@dataclass(frozen=True)
class Acquired:
    worker: int  # the leased value, 0 <= worker < pool size
    tick_bound: int  # highest tick previous holders may have used; -1 if none known
    bound_is_ms: bool = False  # the bound is a Unix time in ms (slots), not a raw tick


#: ``LeaseInfo.expires_ms`` of a lock file: held while its process lives, never expiring.
WHILE_ALIVE = -1


@dataclass(frozen=True)
class LeaseInfo:
    pool: str
    worker: int
    owner: str
    acquired_ms: int
    expires_ms: int
    tick_bound: int


class LeaseStore(Protocol):
    name: str

    def acquire(
        self, pool: str, size: int, owner: str, token: str, ttl_ms: int, *, first: int = 0
    ) -> Acquired: ...

    def renew(self, pool: str, worker: int, token: str, ttl_ms: int, tick_bound: int) -> bool: ...

    def release(self, pool: str, worker: int, token: str, tick_bound: int) -> None: ...

    def leases(self, pool: str | None = None) -> list[LeaseInfo]: ...


def exhausted(pool: str, size: int, live: int) -> WorkerPoolExhausted:
    return WorkerPoolExhausted(
        f"Worker-id pool {pool!r} is exhausted: all {size} worker ids are leased "
        f"({live} live leases). Stop some processes, wait for dead ones' leases to expire, "
        "or use a layout with more node bits (SNOWID_WORKER_POOL_SIZE limits the pool)."
    )


def expires_in_s(lease: LeaseInfo, now_ms: int) -> float | str:
    """Seconds until ``lease`` expires, or what holds it for a lock file."""
    if lease.expires_ms == WHILE_ALIVE:
        return "while its process lives"
    return round((lease.expires_ms - now_ms) / 1000, 1)
