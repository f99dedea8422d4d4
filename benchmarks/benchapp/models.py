from __future__ import annotations

import uuid

import uuid6
from django.db import models

import django_snowid
from django_snowid.fields import OrderNumberField, OrderNumberQuerySet, SnowflakeAutoField


class AutoRow(models.Model):
    """Baseline: the database numbers the rows."""

    id = models.BigAutoField(primary_key=True)
    name = models.CharField(max_length=50)
    value = models.IntegerField()


class SnowRow(models.Model):
    id = SnowflakeAutoField(primary_key=True)
    name = models.CharField(max_length=50)
    value = models.IntegerField()


def _naive_default() -> int:
    return django_snowid.next_id()


class NaiveRow(models.Model):
    """A plain BIGINT pk with a Python default: one generator call per instance, at init."""

    id = models.BigIntegerField(primary_key=True, default=_naive_default)
    name = models.CharField(max_length=50)
    value = models.IntegerField()


class PlainOrder(models.Model):
    """Baseline of the create() comparison: the same row without an order number."""

    id = models.BigAutoField(primary_key=True)
    user_id = models.BigIntegerField()


class NumberedOrder(models.Model):
    id = models.BigAutoField(primary_key=True)
    user_id = models.BigIntegerField()
    number = OrderNumberField(shard_from="user_id")

    objects = OrderNumberQuerySet.as_manager()


class WideNumberedOrder(models.Model):
    """NumberedOrder with a 19-bit sequence (524,287 numbers a second), on a stream of its
    own: bulk_create() back to back passes the default format's 16,383 a second, and a
    wait for the next second is the format's limit, not the cost of the code."""

    id = models.BigAutoField(primary_key=True)
    user_id = models.BigIntegerField()
    number = OrderNumberField(shard_from="user_id", sequence_bits=19)

    objects = OrderNumberQuerySet.as_manager()


class ConcealedOrder(models.Model):
    """NumberedOrder with a concealed sequence (``SNOWID_ORDER_KEY`` is the bench key)."""

    id = models.BigAutoField(primary_key=True)
    user_id = models.BigIntegerField()
    number = OrderNumberField(shard_from="user_id", conceal=True)


class DatabaseNumberedOrder(models.Model):
    """NumberedOrder on a stream of its own: bench_remote.py issues these numbers from the
    database store and NumberedOrder's from Redis, one store per stream."""

    id = models.BigAutoField(primary_key=True)
    user_id = models.BigIntegerField()
    number = OrderNumberField(shard_from="user_id")


class UniqueColumnOrder(models.Model):
    """The database's share of the cost: the same UNIQUE column, filled without Redis."""

    id = models.BigAutoField(primary_key=True)
    user_id = models.BigIntegerField()
    number = models.BigIntegerField(unique=True)


class Uuid7Row(models.Model):
    """What users pick instead: a UUID pk, version 7 (time-ordered), made in Python."""

    id = models.UUIDField(primary_key=True, default=uuid6.uuid7)
    name = models.CharField(max_length=50)
    value = models.IntegerField()


class Uuid4Row(models.Model):
    """A random UUID pk: inserts land all over the index."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4)
    name = models.CharField(max_length=50)
    value = models.IntegerField()
