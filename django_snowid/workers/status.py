"""What the admin status page and ``manage.py snowid_workers`` show of the worker-id
leases: one row a lease that the lease store keeps a record of."""

from __future__ import annotations

import time
from typing import Any, Final

from ..conf import conf
from ..db.errors import is_missing_table
from .lease import LeaseHolder, held_leases, waits
from .sources import LEASE_SOURCES
from .stores import get_lease_store
from .stores.base import expires_in_s, horizon_text

__all__ = ["RECORDED", "lease_findings", "lease_problems", "lease_rows"]

#: The sources whose leases are records a store lists without touching them (a lock
#: file is held, not recorded: ``snowid_workers`` reads the kernel's list of locks).
RECORDED: Final = ("redis", "database")


def lease_rows(*, expired: bool = False) -> list[dict[str, Any]]:
    """The live leases of ``SNOWID_WORKER_ID_SOURCE`` (``expired``: every record), by pool
    and worker id; none for a source that keeps no records."""
    source = conf.WORKER_ID_SOURCE
    if source not in RECORDED:
        return []
    now_ms = time.time_ns() // 1_000_000
    return [
        {
            "pool": lease.pool,
            "worker_id": lease.worker,
            "layout": lease.layout,
            "owner": lease.owner,
            "age_s": round((now_ms - lease.acquired_ms) / 1000, 1) if lease.acquired_ms else "",
            "issued_until": horizon_text(lease.horizon_ms),
            "expires_in_s": expires_in_s(lease, now_ms),
        }
        for lease in get_lease_store(source).leases()
        if expired or lease.live(now_ms)
    ]


def lease_findings(now: float | None = None) -> list[tuple[bool, str]]:
    """This process's leases (lost, expired, renewals overdue), and the lease store:
    (fatal, message) pairs for the health check."""
    findings = list(lease_problems(now))
    source = conf.WORKER_ID_SOURCE
    if source in LEASE_SOURCES:
        try:
            get_lease_store(source).leases()
        except Exception as exc:
            if is_missing_table(exc.__cause__ or exc):  # says: run manage.py migrate
                return [*findings, (True, str(exc))]
            findings.append(
                (
                    True,
                    f"The {source!r} worker-id lease store is unreachable ({exc}): processes "
                    "without a lease cannot issue ids, and holders lose theirs within "
                    f"SNOWID_WORKER_LEASE_TTL_S={conf.WORKER_LEASE_TTL_S:g} s. Bring it back "
                    "(see SNOWID_WORKER_ID_SOURCE).",
                )
            )
    return findings


def lease_problems(now: float | None = None) -> list[tuple[bool, str]]:
    """What is wrong with this process's worker-id leases, as (fatal, message): a lease
    lost and not yet replaced by a newer one of its pool, a lease past the time it can be
    trusted, or a renewal overdue (``now``: ``time.monotonic()``; tests pass their own)."""
    now = time.monotonic() if now is None else now
    problems: list[tuple[bool, str]] = [
        (
            True,
            f"This process waits until {horizon_text(until)} for a worker id of pool {pool!r} "
            f"({store!r} store): the store lost its records (or never had any), and hands "
            "out no worker id until live holders have re-asserted theirs. No id of that "
            "pool is issued until then. If it recurs, the lease store loses data: check "
            "its persistence and failovers.",
        )
        for store, pool, until in waits()
    ]
    held = held_leases()
    for lease in held:
        problem = _lease_problem(lease, held, now)
        if problem is not None:
            problems.append(problem)
    return problems


def _lease_problem(
    lease: LeaseHolder, held: list[LeaseHolder], now: float
) -> tuple[bool, str] | None:
    where = f"worker id {lease.worker} of pool {lease.pool.name!r} ({lease.store.name!r} store)"
    if lease.lost or lease.released:
        if any(o is not lease and o.pool.name == lease.pool.name for o in held):
            return None
        cause = lease.taken_by_another or "was not renewed within its time-to-live"
        return (
            True,
            f"The lease on {where} {cause}; this process issues no id of that "
            "pool until it takes a new lease (its next id tries). If it recurs, "
            "the lease store is unreachable or slower than "
            "SNOWID_WORKER_LEASE_TTL_S allows: check it and the network.",
        )
    if now > lease.valid_until:
        return (
            True,
            f"The lease on {where} was last renewed {now - lease.renewed_at:.1f} s "
            "ago, past the time it can be trusted: the next id refuses. Check that the "
            "lease store is reachable.",
        )
    if now - lease.renewed_at > 1.5 * lease.interval_s:
        return (
            False,
            f"The lease on {where} was last renewed {now - lease.renewed_at:.1f} s "
            f"ago (a heartbeat every {lease.interval_s:g} s): renewals are failing; "
            "check that the lease store is reachable before the lease expires.",
        )
    return None
