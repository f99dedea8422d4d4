"""A small shop: products, orders and their lines. Users come from django.contrib.auth."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from django_snowid.fields import (
    OrderNumberField,
    OrderNumberQuerySet,
    SnowflakeAutoField,
    SnowflakeField,
)
from django_snowid.sequences.fields import SequenceTextField


class Product(models.Model):
    # id: SnowflakeAutoField, from DEFAULT_AUTO_FIELD
    name = models.CharField(max_length=100)
    price_cents = models.PositiveIntegerField()

    def __str__(self) -> str:
        return self.name


class Order(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="orders"
    )
    # A second, JavaScript-safe id for URLs and APIs.
    public_id = SnowflakeField(layout="public")
    # yyMMddHHmmss + sequence + the low 4 bits of the user id: number % 16 == user_id % 16.
    number = OrderNumberField(shard_from="user_id")
    note = models.CharField(max_length=200, blank=True)

    # bulk_create() reserves order numbers in blocks (one round trip per block).
    objects = OrderNumberQuerySet.as_manager()

    def __str__(self) -> str:
        return f"Order {self.pk}"


class OrderLine(models.Model):
    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="lines")
    product = models.ForeignKey(Product, on_delete=models.PROTECT)
    quantity = models.PositiveIntegerField(default=1)


class GiftCard(models.Model):
    """Ids a browser can hold as numbers: the js53 layout (at most 2**53 - 1).

    41 bits of milliseconds, 32 workers, 128 ids a millisecond per worker (128,000 a
    second): enough for gift cards, and `JSON.parse` keeps every digit.
    """

    id = SnowflakeAutoField(primary_key=True, layout="public")
    code = models.CharField(max_length=20)
    balance_cents = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return self.code


class Invoice(models.Model):
    """One invoice an order, numbered by the daily "invoice" sequence (no gaps in a day)."""

    order = models.OneToOneField(Order, on_delete=models.PROTECT, related_name="invoice")
    code = SequenceTextField(
        sequence="invoice", template="INV-{day}-{value:06d}", max_length=20, unique=True
    )

    def __str__(self) -> str:
        return self.code
