"""The inventory of our fields: kinds are objects (their names still accepted), a model's
field of a kind, the fields people read, the newest value of some columns."""

from __future__ import annotations

import pytest

from django_snowid import inventory
from django_snowid.inventory import ORDER, SEQUENCE, SNOWFLAKE, Kind
from tests.testapp.models import Customer, Product, ShopOrder, Ticket


def test_each_field_class_declares_its_kind_object():
    assert inventory.kind_of(Product._meta.pk) is SNOWFLAKE
    assert inventory.kind_of(ShopOrder._meta.get_field("number")) is ORDER
    assert inventory.kind_of(Customer._meta.get_field("number")) is SEQUENCE
    assert inventory.kind_of(ShopOrder._meta.pk) is None  # not ours
    assert Kind("order") is ORDER  # the name, as the string forms pass it


def test_fields_of_a_kind_by_object_or_by_name():
    assert inventory.fields(ORDER) == inventory.fields("order")
    assert ShopOrder._meta.get_field("number") in inventory.fields(ORDER)
    assert inventory.fields((SNOWFLAKE, ORDER), "testapp.Ticket") == [
        Ticket._meta.pk,
        Ticket._meta.get_field("public_id"),
    ]


def test_a_models_field_of_a_kind_is_its_primary_key_first():
    assert inventory.field_of(Ticket, SNOWFLAKE) is Ticket._meta.pk
    assert inventory.field_of(ShopOrder, ORDER) is ShopOrder._meta.get_field("number")
    assert inventory.field_of(ShopOrder, SNOWFLAKE) is None


def test_the_fields_people_read():
    assert inventory.readable(Ticket) == [Ticket._meta.pk, Ticket._meta.get_field("public_id")]
    assert inventory.readable(Customer) == []  # sequence values read as plain numbers
    everywhere = inventory.readable()
    assert Customer._meta.get_field("number") not in everywhere
    assert {inventory.kind_of(f) for f in everywhere} == {SNOWFLAKE, ORDER}


@pytest.mark.django_db
def test_the_newest_value_of_some_columns():
    fields = [Product._meta.pk, Ticket._meta.pk]
    assert inventory.newest(fields) is None
    Product.objects.create(name="tea")
    newer = Ticket.objects.create()
    assert inventory.newest(fields) == max(Product.objects.get().pk, newer.pk)
