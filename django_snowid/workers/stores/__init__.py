"""Where worker-id leases live: the database (the default), Redis, or lock files on
this host. :func:`get_lease_store` gives the store of a source, one per process and
settings (and, for the database source, per database); ``base`` says what every store
answers and what it may declare about itself."""

from __future__ import annotations

import os

from django.apps import apps
from django.db import connections, router

from ...conf import conf
from .base import LeaseStore
from .database import store_for
from .slot import SlotStore

__all__ = ["get_lease_store"]

_stores: dict[tuple[str, ...], LeaseStore] = {}


def get_lease_store(source: str) -> LeaseStore:
    """The store of the lease source ``source`` (``slot``, ``redis``, ``database``).

    For ``database``, the store of the database the lease table routes to, picked once
    for what that database is (``database.store_for``): the table, lock files beside an
    SQLite file, or this process's memory for an in-memory SQLite database.
    """
    if source == "database":
        alias = router.db_for_write(apps.get_model("django_snowid", "WorkerLease"))
        name = str(connections[alias].settings_dict["NAME"])
        cache_key: tuple[str, ...] = (source, alias, connections[alias].vendor, name)
    else:
        cache_key = (source, conf.REDIS_ALIAS, conf.WORKER_SLOT_DIR)
    store = _stores.get(cache_key)
    if store is None:
        store = _stores.setdefault(cache_key, _new_store(source, cache_key))
    return store


def _new_store(source: str, cache_key: tuple[str, ...]) -> LeaseStore:
    if source == "redis":
        # Imported here so that a project whose leases are not in Redis loads no Redis code.
        from .redis import RedisLeaseStore

        return RedisLeaseStore(conf.REDIS_ALIAS)
    if source == "database":
        return store_for(cache_key[1])
    return SlotStore(conf.WORKER_SLOT_DIR)


def _after_fork_in_child() -> None:
    # The child's copies of the parent's lock files are closed (the parent keeps its slots).
    for store in _stores.values():
        store.forget_after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)
