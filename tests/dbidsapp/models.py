"""Models with database ids (PostgreSQL runs only: ``tests/settings.py`` installs this app
there; the system checks refuse ``database_ids=True`` on SQLite and MariaDB)."""

from __future__ import annotations

from django.db import models

from django_snowid.fields import SnowflakeAutoField, SnowflakeField


class Reading(models.Model):
    """Rows that COPY and INSERT ... SELECT load without an id, beside Django's own."""

    id = SnowflakeAutoField(primary_key=True, layout="dbids", database_ids=True)
    value = models.IntegerField()
    source = models.CharField(max_length=20, default="python")


class Label(models.Model):
    """A non-pk Snowflake column whose database default migrations add and remove."""

    code = SnowflakeField(layout="dbids", database_ids=True)
    name = models.CharField(max_length=50)
    # Added by a later migration to a table that holds rows: each row gets a database id.
    batch = SnowflakeField(layout="dbids", database_ids=True)
