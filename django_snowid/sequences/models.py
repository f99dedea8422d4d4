"""The table of named sequences: one mark a sequence (a day, for a daily one)."""

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
        verbose_name = "sequence mark"

    def __str__(self) -> str:
        return self.name
