from __future__ import annotations

from django.db import models

from django_snowid.fields import OrderNumberField
from django_snowid.sequences.fields import SequenceField


class Order(models.Model):
    user_id = models.BigIntegerField()
    number = OrderNumberField(shard_from="user_id")


class PhoneOrder(models.Model):
    customer_id = models.BigIntegerField()
    number = OrderNumberField(
        shard_from="customer_id", packing="decimal", sequence_digits=4, check_digit="damm"
    )


class Invoice(models.Model):
    number = SequenceField(sequence="invoices")
