"""Where worker-id leases live: the database (the default), Redis, or lock files on
this host. :func:`get_lease_store` gives the store of a source, one per process and
settings; ``base`` says what every store answers."""

from __future__ import annotations

import os

from ...conf import conf
from .base import LeaseStore
from .database import DatabaseLeaseStore
from .slot import SlotStore

__all__ = ["get_lease_store"]

_stores: dict[tuple[str, str, str], LeaseStore] = {}


def get_lease_store(source: str) -> LeaseStore:
    """The store of the lease source ``source`` (``slot``, ``redis``, ``database``)."""
    cache_key = (source, conf.REDIS_ALIAS, conf.WORKER_SLOT_DIR)
    store = _stores.get(cache_key)
    if store is None:
        store = _stores.setdefault(cache_key, _new_store(source))
    return store


def _new_store(source: str) -> LeaseStore:
    if source == "redis":
        # Imported here so that a project whose leases are not in Redis loads no Redis code.
        from .redis import RedisLeaseStore

        return RedisLeaseStore(conf.REDIS_ALIAS)
    if source == "database":
        return DatabaseLeaseStore()
    return SlotStore(conf.WORKER_SLOT_DIR)


def _after_fork_in_child() -> None:
    # The child's copies of the parent's lock files are closed (the parent keeps its slots).
    for store in _stores.values():
        if isinstance(store, (SlotStore, DatabaseLeaseStore)):
            store.forget_after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)
