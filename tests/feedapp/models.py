"""Models of the pages-by-ids tests: a Snowflake pk, and a non-pk Snowflake key."""

from __future__ import annotations

from django.db import models

from django_snowid.fields import SnowflakeAutoField, SnowflakeField


class Post(models.Model):
    """Paged by its Snowflake pk (the default layout)."""

    id = SnowflakeAutoField(primary_key=True)
    author = models.CharField(max_length=20, default="ann")
    body = models.CharField(max_length=100, blank=True)


class Entry(models.Model):
    """Paged by ``stamp``, a unique Snowflake column of the 53-bit layout, beside a plain pk."""

    id = models.BigAutoField(primary_key=True)
    stamp = SnowflakeField(layout="js")
    # No index: refused as a key.
    loose = SnowflakeField(layout="js", unique=False)
