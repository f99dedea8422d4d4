"""The adoption benchmark's tables: ``Item`` had a 32-bit ``AutoField`` (migration 0001)
and the code now says ``SnowflakeAutoField``; a child table's foreign key, an
auto-created many-to-many table and a generic relation (32-bit in 0001, 64-bit in the
code) point at it."""

from __future__ import annotations

from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models

from django_snowid.fields import SnowflakeAutoField


class Item(models.Model):
    id = SnowflakeAutoField(primary_key=True)
    name = models.CharField(max_length=20)


class Child(models.Model):
    id = models.BigAutoField(primary_key=True)
    item = models.ForeignKey(Item, on_delete=models.CASCADE)
    label = models.CharField(max_length=20)


class Group(models.Model):
    id = models.BigAutoField(primary_key=True)
    name = models.CharField(max_length=20)
    items = models.ManyToManyField(Item, related_name="groups")


class Event(models.Model):
    id = models.BigAutoField(primary_key=True)
    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
    object_id = models.PositiveBigIntegerField()
    content_object = GenericForeignKey("content_type", "object_id")
    kind = models.CharField(max_length=20)
