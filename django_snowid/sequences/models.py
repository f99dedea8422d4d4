"""The table of named sequences: one mark a sequence (a day, for a daily one)."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Q, Value
from django.db.models.functions import Length, Substr
from django.db.models.lookups import Exact, LessThanOrEqual

from ..db.constraints import check_constraint

#: A sequence's name, as django-sequences' column takes it; a daily sequence's stored name
#: adds ``:YYYYMMDD``.
MAX_NAME = 100
DAY_SUFFIX = len(":YYYYMMDD")


def name_fits() -> Any:
    """At most 100 characters, or 100 and a day (``:`` nine characters from the end)."""
    length = Length("name")
    daily = LessThanOrEqual(length, MAX_NAME + DAY_SUFFIX) & Exact(
        Substr("name", length - (DAY_SUFFIX - 1), 1), Value(":")
    )
    return Q(LessThanOrEqual(length, MAX_NAME)) | daily


class SequenceMark(models.Model):
    """The largest value a sequence may have issued (per day for a daily sequence).

    The database store issues values by raising it; the Redis store raises it ahead of
    demand, and Redis never hands out a value above it. It only ever rises.
    """

    name = models.CharField(max_length=120, primary_key=True)
    value = models.BigIntegerField()

    class Meta:
        verbose_name = "sequence mark"
        # What django-sequences' table refuses, ours refuses too: the last line of defence
        # behind the checks of the API.
        constraints = [
            check_constraint(Q(value__gte=0), "snowid_sequences_mark_not_negative"),
            check_constraint(name_fits(), "snowid_sequences_name_length"),
        ]

    def __str__(self) -> str:
        return self.name


class DjangoSequencesImport(models.Model):
    """What the last import found in a table of django-sequences (``rows``: each name's
    last value). A change to that table since means that old code still draws from it,
    issuing values ours issue too: check E801 and the health check report it."""

    table = models.CharField(max_length=200, primary_key=True)
    rows = models.JSONField(default=dict)
    imported_at = models.DateTimeField()

    class Meta:
        verbose_name = "import from django-sequences"

    def __str__(self) -> str:
        return self.table
