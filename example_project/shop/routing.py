"""An example database router: orders live on the shard of their user.

With N shard databases (N dividing 16), an order goes to ``SHOP_ORDER_SHARDS[shard % N]``
where ``shard`` is the low 4 bits of its number, which equal the low 4 bits of its user
id: ``number % N == user_id % N``. A user's orders all sit on one database, and an order
number alone says where to look (``database_for_number``). ``order_number_databases``
tells django-snowid's recovery to read every shard: the largest number may be on any.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models


def _order_field() -> Any:
    from .models import Order

    return Order._meta.get_field("number")


def database_for_shard(shard: int) -> str:
    shards = settings.SHOP_ORDER_SHARDS
    return shards[shard % len(shards)]


def database_for_user(user_id: int) -> str:
    return database_for_shard(_order_field().format.shard_of_user(user_id))


def database_for_number(number: int) -> str:
    """Where the order with this number lives: ``Order.objects.using(...).get(number=n)``."""
    return database_for_shard(_order_field().shard_of(number))


class OrderShardRouter:
    def db_for_write(self, model: type[models.Model], **hints: Any) -> str | None:
        from .models import Order

        instance = hints.get("instance")
        # The hint may be a related object (the user being assigned to an order), and an
        # order may still be under construction.
        if model is not Order or not isinstance(instance, Order):
            return None
        if getattr(instance, "number", None) is not None:
            return database_for_number(instance.number)
        if getattr(instance, "user_id", None) is not None:
            return database_for_user(instance.user_id)
        return None

    db_for_read = db_for_write

    def order_number_databases(self, model: type[models.Model]) -> list[str] | None:
        """Every database that can hold orders: order-number recovery reads them all."""
        return list(settings.SHOP_ORDER_SHARDS) if model._meta.label == "shop.Order" else None
