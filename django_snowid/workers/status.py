"""What the admin status page and ``manage.py snowid_workers`` show of the worker-id
leases: one row a lease that the lease store keeps a record of."""

from __future__ import annotations

import time
from typing import Any, Final

from ..conf import conf
from ..db.errors import is_missing_table
from .lease import lease_problems
from .sources import LEASE_SOURCES
from .stores import get_lease_store
from .stores.base import expires_in_s, horizon_text

__all__ = ["RECORDED", "lease_findings", "lease_rows"]

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
