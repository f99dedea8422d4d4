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


def test_command_lists_and_raises(seq_backend, capsys):
    import json

    from django.core.management import CommandError, call_command

    next_values("invoice", 7)
    call_command("snowid_sequences", "--json")
    rows = json.loads(capsys.readouterr().out)
    (row,) = [r for r in rows if r["name"] == "invoice"]
    assert row["current"] == 7
    assert row["mark"] >= 7
    if seq_backend == "redis":
        before = row["mark"]
        call_command("snowid_sequences", "--raise", "invoice", "--by", "5000")
        call_command("snowid_sequences", "--json")
        (row,) = [r for r in json.loads(capsys.readouterr().out.split("\n", 1)[1]) if r["name"] == "invoice"]
        assert row["mark"] == before + 5000 == row["published"]
        assert next_value("invoice") == 8
    else:
        with pytest.raises(CommandError, match="no mark to raise"):
            call_command("snowid_sequences", "--raise", "invoice", "--by", "5")
    with pytest.raises(CommandError, match="--by"):
        call_command("snowid_sequences", "--raise", "invoice", "--by", "0")
