"""Recovery reads the primary, and every shard a router spreads a model over."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from django.test import override_settings

from django_snowid.orders.recovery import databases_for
from django_snowid.orders.stores import get_store
from tests.support import forget
from tests.testapp.models import ShopOrder

pytestmark = pytest.mark.django_db(databases=["default", "other"])


class ReplicaRouter:
    """Reads from "other", a replica that lags; writes to "default", the primary."""

    def db_for_read(self, model: Any, **hints: Any) -> str:
        return "other"

    def db_for_write(self, model: Any, **hints: Any) -> str:
        return "default"


class ShardRouter:
    """Orders of even shards on "default", of odd shards on "other"."""

    def db_for_write(self, model: Any, **hints: Any) -> str | None:
        instance = hints.get("instance")
        if isinstance(instance, ShopOrder) and instance.number is not None:
            return ("default", "other")[instance.number % 2]
        return None

    db_for_read = db_for_write

    def order_number_databases(self, model: Any) -> list[str] | None:
        return ["default", "other"] if model is ShopOrder else None


def field_and_second():
    field = ShopOrder._meta.get_field("number")
    return field, field.format.local_second(datetime.now(timezone.utc))


@pytest.fixture(autouse=True)
def _all_backends(backend):
    """Each test once per store."""


def test_recovery_reads_the_primary_not_a_lagging_replica():
    field, now = field_and_second()
    newest = field.format.compose(now + 3, 77, 1)
    ShopOrder.objects.using("default").create(user_id=1, number=newest)  # the primary
    ShopOrder.objects.using("other").create(user_id=1, number=field.format.compose(now, 5, 1))
    with override_settings(DATABASE_ROUTERS=[ReplicaRouter()]):
        assert databases_for(ShopOrder) == ["default"]
        forget(field.stream)
        order = ShopOrder.objects.create(user_id=1)
    assert order.number > newest
    assert get_store().read(field.stream) == field.format.position(order.number)


@pytest.mark.parametrize("newest_on", ["default", "other"])
def test_recovery_reads_every_shard(newest_on):
    field, now = field_and_second()
    newest = field.format.compose(now + 3, 77, int(newest_on == "other"))
    older = field.format.compose(now + 2, 10, int(newest_on != "other"))
    with override_settings(DATABASE_ROUTERS=[ShardRouter()]):
        assert databases_for(ShopOrder) == ["default", "other"]
        ShopOrder(user_id=1, number=newest).save()  # the router places it by its shard
        ShopOrder(user_id=1, number=older).save()
        assert ShopOrder.objects.using(newest_on).filter(number=newest).exists()
        forget(field.stream)
        order = ShopOrder.objects.create(user_id=2)
    assert order.number > newest
