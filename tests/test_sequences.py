"""Named sequences: the API on both stores, days, marks, Redis losses, bad input."""

from __future__ import annotations

import pytest
from django.db import transaction

from django_snowid import next_value, next_values
from django_snowid.sequences.config import get_spec
from django_snowid.sequences.database import read_marks
from django_snowid.sequences.exceptions import (
    InvalidSequence,
    SequenceUnavailable,
    UnknownSequence,
)
from django_snowid.sequences.stores import DatabaseSequenceStore, RedisSequenceStore

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(params=[pytest.param("redis", marks=pytest.mark.redis), "database"])
def seq_backend(request, settings):
    settings.SNOWID_SEQUENCE_BACKEND = request.param
    return request.param


def test_values_go_up_by_one(seq_backend):
    assert [next_value("customer") for _ in range(3)] == [1, 2, 3]
    block = next_values("customer", 5)
    assert list(block) == [4, 5, 6, 7, 8]
    assert next_value("customer") == 9
    assert next_value("coupon") == 1
