"""Where a stream's state lives: Redis (:mod:`.redis`) or a table (:mod:`.database`).

Both stores run :func:`django_snowid.core.order_stream.reserve` atomically and answer with its
outcomes, or :data:`MISSING` when they hold no state for the stream that they can trust
(a new stream, a Redis that restarted or was flushed, or a state another Redis server
wrote, such as a replica promoted by a failover): the caller must then recover the state
from the database before anything is issued.

The Redis store is imported when it is first used: a project on the database store
never imports ``redis``.
"""

from __future__ import annotations

from ...conf import conf, on_settings_changed
from ...exceptions import OrderNumberError
from .base import (
    BACKENDS,
    MISSING,
    Missing,
    OrderStore,
    Position,
    RecoverArgs,
    ReserveArgs,
)
from .database import DatabaseOrderStore

__all__ = [
    "BACKENDS",
    "MISSING",
    "DatabaseOrderStore",
    "Missing",
    "OrderStore",
    "Position",
    "RecoverArgs",
    "ReserveArgs",
    "get_store",
]

_stores: dict[tuple[str, str, str], OrderStore] = {}
on_settings_changed(_stores.clear)


def get_store() -> OrderStore:
    """The store named by ``SNOWID_ORDER_BACKEND`` (one per process and settings)."""
    key = (conf.ORDER_BACKEND, conf.REDIS_ALIAS, conf.REDIS_KEY_PREFIX)
    store = _stores.get(key)
    if store is None:
        if conf.ORDER_BACKEND == "redis":
            from .redis import RedisOrderStore  # imports redis: only for its users

            store = RedisOrderStore(conf.REDIS_ALIAS, conf.REDIS_KEY_PREFIX)
        elif conf.ORDER_BACKEND == "database":
            store = DatabaseOrderStore()
        else:
            raise OrderNumberError(
                f"SNOWID_ORDER_BACKEND is {conf.ORDER_BACKEND!r}; expected one of {list(BACKENDS)}."
            )
        store = _stores.setdefault(key, store)
    return store
