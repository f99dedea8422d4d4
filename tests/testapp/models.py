from __future__ import annotations

from django.db import models

from django_snowid.fields import (
    OrderNumberField,
    OrderNumberQuerySet,
    SnowflakeAutoField,
    SnowflakeField,
)
from django_snowid.ids.publicids import PublicIdQuerySet
from django_snowid.sequences.fields import SequenceField, SequenceTextField


class Product(models.Model):
    """Gets a SnowflakeAutoField from DEFAULT_AUTO_FIELD."""

    name = models.CharField(max_length=100)


class Tag(models.Model):
    name = models.CharField(max_length=50)
    products = models.ManyToManyField(Product, related_name="tags")


class Review(models.Model):
    product = models.ForeignKey(Product, on_delete=models.CASCADE, related_name="reviews")
    text = models.CharField(max_length=100, blank=True)


class Ticket(models.Model):
    """An explicit pk with another layout, and a non-pk Snowflake column."""

    id = SnowflakeAutoField(primary_key=True, layout="js")
    public_id = SnowflakeField(layout="dc")
    title = models.CharField(max_length=100, blank=True)

    objects = PublicIdQuerySet.as_manager()


class PlainAuto(models.Model):
    """The BigAutoField baseline."""

    id = models.BigAutoField(primary_key=True)
    name = models.CharField(max_length=100)


class Legacy(models.Model):
    """Migrated from BigAutoField to SnowflakeAutoField (migrations 0001 -> 0002)."""

    id = SnowflakeAutoField(primary_key=True)
    name = models.CharField(max_length=100)


class LegacyChild(models.Model):
    parent = models.ForeignKey(Legacy, on_delete=models.CASCADE, related_name="children")


class ShopOrder(models.Model):
    """Binary packing with the default widths: 14 sequence bits, 4 shard bits."""

    id = models.BigAutoField(primary_key=True)
    user_id = models.BigIntegerField(null=True)
    number = OrderNumberField(shard_from="user_id")

    objects = OrderNumberQuerySet.as_manager()


class RushOrder(ShopOrder):
    """A proxy: saves send the proxy as the signal's sender."""

    class Meta:
        proxy = True


class GiftOrder(ShopOrder):
    """A multi-table child: the number lives in the parent's table."""

    message = models.CharField(max_length=100, blank=True)


class DecimalOrder(models.Model):
    id = models.BigAutoField(primary_key=True)
    user_id = models.BigIntegerField()
    number = OrderNumberField(shard_from="user_id", packing="decimal")


class TinyOrder(models.Model):
    """A 3-bit sequence: seven numbers a second."""

    id = models.BigAutoField(primary_key=True)
    user_id = models.BigIntegerField()
    number = OrderNumberField(shard_from="user_id", sequence_bits=3, stream="tiny")


class Customer(models.Model):
    """Filled from the named sequence "customer" on insert."""

    id = models.BigAutoField(primary_key=True)
    number = SequenceField(sequence="customer", unique=True)


class Invoice(models.Model):
    """A daily invoice number as text: INV-20261123-000001."""

    id = models.BigAutoField(primary_key=True)
    code = SequenceTextField(
        sequence="invoice", template="INV-{day}-{value:06d}", max_length=20, unique=True
    )


class ShardedOrder(models.Model):
    """Snowflake ids that end with the low 4 bits of the user id (layout "sharded")."""

    id = SnowflakeAutoField(primary_key=True, layout="sharded", shard_from="user_id")
    user_id = models.BigIntegerField(null=True)
    receipt = SnowflakeField(layout="sharded", shard_from="user_id", null=True)


class Shopper(models.Model):
    """A customer with a Snowflake id (DEFAULT_AUTO_FIELD)."""

    name = models.CharField(max_length=100)


class Purchase(models.Model):
    """A Snowflake id, a foreign key to one, and order numbers of both packings."""

    shopper = models.ForeignKey(Shopper, on_delete=models.CASCADE, related_name="purchases")
    number = OrderNumberField(shard_from="shopper_id")
    receipt = OrderNumberField(shard_from="shopper_id", packing="decimal")


class Parcel(models.Model):
    """Foreign keys to an order number and to a Snowflake column that is not a pk."""

    purchase = models.ForeignKey(
        Purchase, to_field="number", on_delete=models.CASCADE, related_name="parcels"
    )
    ticket = models.ForeignKey(
        Ticket, to_field="public_id", null=True, blank=True, on_delete=models.SET_NULL
    )
