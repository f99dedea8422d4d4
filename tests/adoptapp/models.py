"""A project adopting Snowflake ids: ``Shelf`` had a 32-bit ``AutoField`` (migration 0001)
and the code now says ``SnowflakeAutoField``. A multi-table child (and a foreign key to
it), a foreign key, a one-to-one, an auto-created
many-to-many table and a generic relation (Django's documented ``PositiveIntegerField``,
now 64-bit in the code) point at it; django-taggit tags it through the recipe of the docs."""

from __future__ import annotations

import os

from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models
from taggit.managers import TaggableManager
from taggit.models import CommonGenericTaggedItemBase, TaggedItemBase

from django_snowid.fields import SnowflakeAutoField


class TaggedObject(CommonGenericTaggedItemBase, TaggedItemBase):
    """django-taggit's generic through model, with an object id that holds 64-bit ids."""

    id = models.AutoField(primary_key=True)
    object_id = models.BigIntegerField(db_index=True)


class Shelf(models.Model):
    id = SnowflakeAutoField(primary_key=True)
    name = models.CharField(max_length=50)
    tags = TaggableManager(through=TaggedObject, blank=True)


class Book(models.Model):
    id = models.AutoField(primary_key=True)
    shelf = models.ForeignKey(Shelf, on_delete=models.CASCADE, related_name="books")
    title = models.CharField(max_length=50)


class ShelfLabel(models.Model):
    id = models.AutoField(primary_key=True)
    shelf = models.OneToOneField(Shelf, on_delete=models.CASCADE, related_name="label")
    text = models.CharField(max_length=50)


class Reader(models.Model):
    id = models.AutoField(primary_key=True)
    name = models.CharField(max_length=50)
    shelves = models.ManyToManyField(Shelf, related_name="readers")


class DisplayShelf(Shelf):
    """A multi-table child: its key is a one-to-one to Shelf's."""

    place = models.CharField(max_length=50)


class Loan(models.Model):
    """A foreign key one level further down: to DisplayShelf's key."""

    id = models.AutoField(primary_key=True)
    shelf = models.ForeignKey(DisplayShelf, on_delete=models.CASCADE, related_name="loans")


# SNOWID_ADOPT_NARROW_NOTES=1: the code forgot to widen Note's object id.
NOTE_ID = (
    models.PositiveIntegerField
    if os.environ.get("SNOWID_ADOPT_NARROW_NOTES")
    else models.PositiveBigIntegerField
)


class Note(models.Model):
    id = models.AutoField(primary_key=True)
    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
    object_id = NOTE_ID()
    content_object = GenericForeignKey("content_type", "object_id")
    text = models.CharField(max_length=50)
