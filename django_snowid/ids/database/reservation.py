"""The node values databases issue ids from: the top ``SNOWID_DATABASE_NODES`` values of a
layout's worker-id pool, one a PostgreSQL database in ``DATABASES`` order, recorded as
leases that never expire."""

from __future__ import annotations

import time
from typing import Any

from django.apps import apps
from django.conf import settings
from django.db import DatabaseError, connections, router

from ...conf import conf
from ...core.layout import Layout
from ...exceptions import WorkerIdError
from ...workers.pool import PoolSpec, pool_for
from ...workers.stores.base import NEVER_EXPIRES

__all__ = [
    "NEVER",
    "database_index",
    "database_node",
    "owner_of",
    "postgresql_databases",
    "record",
    "reservations",
]

#: ``expires_ms`` of a reservation: never.
NEVER = NEVER_EXPIRES
TOKEN = "database"


def _identity(alias: str) -> tuple[Any, ...]:
    db = connections[alias].settings_dict
    return (db.get("HOST") or "", str(db.get("PORT") or ""), db.get("NAME"))


def postgresql_databases() -> list[str]:
    """The aliases of distinct PostgreSQL databases, in the order of ``DATABASES``."""
    seen: dict[tuple[Any, ...], str] = {}
    for alias in settings.DATABASES:
        if connections[alias].vendor == "postgresql":
            seen.setdefault(_identity(alias), alias)
    return list(seen.values())


def database_index(alias: str) -> int:
    identity = _identity(alias)
    for index, other in enumerate(postgresql_databases()):
        if _identity(other) == identity:
            return index
    raise WorkerIdError(f"The database {alias!r} is not a PostgreSQL database.")


def database_node(layout: Layout, alias: str) -> int:
    """The node value the database ``alias`` issues ids of ``layout`` from."""
    pool = _pool(layout)
    return pool.database_node(database_index(alias))


def _pool(layout: Layout) -> PoolSpec:
    return pool_for(layout, conf.WORKER_ID)


def owner_of(alias: str) -> str:
    return f"database:{alias} ({connections[alias].settings_dict.get('NAME')})"


def record(layout: Layout, alias: str) -> bool:
    """Record ``alias``'s node value of ``layout`` as a lease that never expires (``False``
    without the lease table); :class:`WorkerIdError` when a process holds it."""
    pool = _pool(layout)
    node = pool.database_node(database_index(alias))
    model = apps.get_model("django_snowid", "WorkerLease")
    using = router.db_for_write(model)
    rows = model._default_manager.using(using)
    now_ms = time.time_ns() // 1_000_000
    owner = owner_of(alias)
    try:
        row = rows.filter(pool=pool.name, worker=node).first()
    except DatabaseError:
        return False  # the lease table is not migrated yet: post_migrate records it
    if row is not None and row.token != TOKEN and row.expires_ms > now_ms:
        raise WorkerIdError(
            f"Worker id {node} of pool {pool.name!r} is reserved for the database {alias!r} "
            f"(SNOWID_DATABASE_NODES), but the process {row.owner} holds a lease on it: "
            "restart the processes (new ones never take reserved values), then migrate again."
        )
    fields = {
        "owner": owner,
        "token": TOKEN,
        "acquired_ms": now_ms if row is None or row.token != TOKEN else row.acquired_ms,
        "expires_ms": NEVER,
        "horizon_ms": row.horizon_ms if row is not None else -1,
        "layout": layout.name,
    }
    rows.update_or_create(pool=pool.name, worker=node, defaults=fields)
    return True


def reservations() -> list[dict[str, Any]]:
    """The node values databases hold, as ``snowid_workers`` lists leases."""

    model = apps.get_model("django_snowid", "WorkerLease")
    try:
        rows = list(
            model._default_manager.using(router.db_for_read(model))
            .filter(token=TOKEN, expires_ms__gte=NEVER)
            .order_by("pool", "worker")
        )
    except DatabaseError:
        return []
    return [
        {"pool": r.pool, "worker_id": r.worker, "layout": r.layout, "owner": r.owner} for r in rows
    ]
