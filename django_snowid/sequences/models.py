"""The tables of named sequences (imported by ``django_snowid.models``)."""

from __future__ import annotations

from django.db import models


class SequenceMark(models.Model):
    """The largest value a sequence may have issued (per day for a daily sequence).

    The database store issues values by raising it; the Redis store raises it ahead of
    demand, and Redis never hands out a value above it. It only ever rises.
    """

    name = models.CharField(max_length=120, primary_key=True)
    value = models.BigIntegerField()

    class Meta:
        app_label = "django_snowid"
        verbose_name = "sequence mark"

    def __str__(self) -> str:
        return self.name


class SequenceStatus(models.Model):
    """No table: gives the admin's sequence status page its place on the admin index."""

    class Meta:
        app_label = "django_snowid"
        managed = False
        default_permissions = ()
        verbose_name = "sequence status"
        verbose_name_plural = "Sequences, streams and leases"
