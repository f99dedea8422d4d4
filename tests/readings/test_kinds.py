"""A field's reading is an object of its kind: it fills a row with its own parts, names
and precision, and only a Snowflake reading knows legacy ids."""

from __future__ import annotations

import pytest

from django_snowid.readings import OrderReading, SnowflakeReading
from django_snowid.readings.kinds import field_reading
from django_snowid.readings.rows import DecodedRow
from tests.testapp.models import Product, ShopOrder


def test_each_kind_of_field_reads_as_its_own_class():
    snowflake = field_reading(Product._meta.pk)
    order = field_reading(ShopOrder._meta.get_field("number"))
    assert type(snowflake) is SnowflakeReading and snowflake.milliseconds
    assert type(order) is OrderReading and not order.milliseconds
    assert order.name(["shop.A.number", "shop.B.number"]) == "shop.A.number, shop.B.number"
    assert snowflake.name(["shop.A.id"]) == snowflake.label


@pytest.mark.django_db
def test_a_reading_fills_a_row_with_its_own_texts():
    field = ShopOrder._meta.get_field("number")
    reading = field_reading(field)
    row = DecodedRow(raw="x", value=ShopOrder.objects.create(user_id=3).number)
    reading.fill(row, reading.decode(row.value))
    assert row.kind == "order" and row.counter_text.endswith("/ shard 3")
    assert row.as_record()["shard"] == "3" and row.node_text == ""
    assert not reading.legacy(row)
