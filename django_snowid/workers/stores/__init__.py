"""Where worker-id leases live: the database (the default), Redis, or lock files on
this host (the ``LEASES`` family)."""

from __future__ import annotations

from collections.abc import Hashable

from django.apps import apps
from django.db import connections, router

from ...conf import SnowidSettings, conf
from ...exceptions import WorkerIdError, WorkerIdUnavailable
from ...stores import Family, FamilyChecks, StoreErrors, get_store
from .base import LeaseStore

__all__ = ["LEASES", "get_lease_store"]


def _lease_database() -> Hashable:
    # A test runner renames the database (test_<NAME>) without a settings signal.
    try:
        alias = router.db_for_write(apps.get_model("django_snowid", "WorkerLease"))
    except LookupError:  # the app is not installed (E031): no lease table anywhere
        return None
    return alias, connections[alias].vendor, str(connections[alias].settings_dict["NAME"])


def _leased() -> bool:
    return conf.WORKER_ID_SOURCE in LEASES.choices


LEASES = Family(
    label="worker-id lease store",
    setting=SnowidSettings.WORKER_ID_SOURCE,
    choices={
        "slot": "django_snowid.workers.stores.slot.SlotStore.configured",
        "redis": "django_snowid.workers.stores.redis.RedisLeaseStore.configured",
        "database": "django_snowid.workers.stores.database.configured",
    },
    errors=StoreErrors(
        WorkerIdUnavailable,
        WorkerIdError,
        unreachable="Redis ({where}) is unreachable for worker-id leases: {error}.",
        bad_key="Redis refused the worker-id pool key {key!r}: {error}",
    ),
    checks=FamilyChecks(
        redis="django_snowid.E016",
        redis_message="Worker-id leases use Redis (SNOWID_WORKER_ID_SOURCE = 'redis') through "
        "the cache alias {alias!r} (SNOWID_REDIS_ALIAS), but {problem}. Or set "
        "SNOWID_WORKER_ID_SOURCE = 'database'.",
        table="django_snowid.E017",
        table_consequence="no process can lease a worker id, so none issues ids",
    ),
    in_use=_leased,
    scope=_lease_database,
)


def get_lease_store(source: str | None = None) -> LeaseStore:
    """The lease store of ``source`` (default: ``SNOWID_WORKER_ID_SOURCE``'s)."""
    store: LeaseStore = get_store(LEASES, source)
    return store
