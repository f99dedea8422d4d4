"""model_bakery makes rows with each of our fields filled with the field's own value
(issued on insert, as by ``save()``), with nothing registered by the project."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from django.db import models
from model_bakery import baker, generators

from django_snowid import decode
from django_snowid.fields import OrderNumberField
from django_snowid.testing import bakery
from tests.testapp.models import (
    Customer,
    Invoice,
    Product,
    Purchase,
    ShardedOrder,
    ShopOrder,
    Ticket,
)

pytestmark = pytest.mark.django_db(transaction=True)


def recent(moment: datetime) -> bool:
    """Issued now (an order number by its second, which a stream may run ahead to)."""
    return abs(moment - datetime.now(timezone.utc)) <= timedelta(minutes=5)


def test_snowflake_keys_and_columns_are_issued_ids(database_orders):
    ticket = baker.make(Ticket)
    product = baker.make(Product)
    sharded = baker.make(ShardedOrder, user_id=1820)
    for value, layout in ((ticket.pk, "js"), (ticket.public_id, "dc"), (product.pk, None)):
        assert recent(decode(value, layout=layout).time)
    assert decode(product.pk).node == 3  # SNOWID_WORKER_ID of the test settings
    assert decode(sharded.pk, layout="sharded").shard == 1820 % 16


def test_order_numbers_are_the_streams_own(database_orders):
    purchases = baker.make(Purchase, _quantity=3)  # each with a Shopper baker made
    field = Purchase._meta.get_field("number")
    numbers = [p.number for p in purchases]
    assert numbers == sorted(set(numbers))
    for purchase in purchases:
        decoded = field.decode(purchase.number)
        assert decoded.shard == purchase.shopper_id % 16
        assert recent(decoded.time)
        assert Purchase._meta.get_field("receipt").decode(purchase.receipt).shard == (
            purchase.shopper_id % 100
        )
    order = baker.make(ShopOrder, user_id=7)
    assert ShopOrder._meta.get_field("number").decode(order.number).shard == 7


def test_sequence_fields_take_the_next_values(database_orders):
    first, second = baker.make(Customer, _quantity=2)
    assert second.number == first.number + 1
    invoice = baker.make(Invoice)
    assert invoice.code.startswith("INV-") and invoice.code[-6:].isdigit()


def test_bulk_create_and_prepare(database_orders):
    made = baker.make(Purchase, _quantity=4, _bulk_create=True)
    assert len({p.number for p in Purchase.objects.filter(pk__in=[p.pk for p in made])}) == 4
    prepared = baker.prepare(Purchase, shopper=made[0].shopper)
    assert prepared.number is None  # nothing drawn before the INSERT
    prepared.save()
    assert prepared.number > max(p.number for p in Purchase.objects.exclude(pk=prepared.pk))


def test_a_field_class_defined_after_the_app_started_is_taken_in_by_register():
    class Later(OrderNumberField):
        pass

    assert generators.get(Later) is None
    bakery.register(Later)
    assert generators.get(Later) is bakery.issued_on_insert
    assert generators.get(models.BigIntegerField) is None  # nothing else is touched
