"""Where a stream's state lives: Redis or a table (the ``ORDERS`` family); a store answers
with ``core.order_stream``'s outcomes, or ``MISSING``: recover the stream first."""

from __future__ import annotations

from ... import inventory
from ...conf import SnowidSettings
from ...exceptions import OrderNumberError, OrderNumberUnavailable
from ...stores import Family, FamilyChecks, StoreErrors
from ...stores import get_store as _get_store
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
    "ORDERS",
    "DatabaseOrderStore",
    "Missing",
    "OrderStore",
    "Position",
    "RecoverArgs",
    "ReserveArgs",
    "get_store",
]

ORDERS = Family(
    label="order-number store",
    setting=SnowidSettings.ORDER_BACKEND,
    choices={
        "redis": "django_snowid.orders.stores.redis.RedisOrderStore.configured",
        "database": "django_snowid.orders.stores.database.DatabaseOrderStore",
    },
    errors=StoreErrors(
        OrderNumberUnavailable,
        OrderNumberError,
        unreachable="Redis ({where}) is unreachable: {error}. No order number was issued.",
        bad_key="Redis refused the order-number key {key!r}: {error}",
    ),
    checks=FamilyChecks(
        unknown="django_snowid.E205",
        redis="django_snowid.E206",
        redis_message="Order numbers use Redis through the cache alias {alias!r} "
        "(SNOWID_REDIS_ALIAS), but {problem}. Or set SNOWID_ORDER_BACKEND = 'database'.",
        table="django_snowid.E220",
        table_consequence="order numbers keep their streams there (the 'database' "
        "SNOWID_ORDER_BACKEND), and none is issued without it",
    ),
    in_use=lambda: bool(inventory.order_fields()),
)


def get_store() -> OrderStore:
    """The store ``SNOWID_ORDER_BACKEND`` names (one per process and settings)."""
    store: OrderStore = _get_store(ORDERS)
    return store
