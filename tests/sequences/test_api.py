"""Named sequences' full API: last_value, delete, initial_value, reset_value, increment,
nowait and the Sequence object, on both stores, in autocommit and inside a transaction."""

from __future__ import annotations

import contextlib
import itertools

import pytest
from django.db import transaction

from django_snowid.exceptions import (
    InvalidSequence,
    SequenceLocked,
    SequenceNotSupported,
)
from django_snowid.sequences import Sequence, delete, last_value, next_value, next_values
from django_snowid.sequences.stores.database import read_marks

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(params=["autocommit", "atomic"])
def mode(request):
    """Run the body in autocommit, or inside an outer transaction that commits."""
    return transaction.atomic if request.param == "atomic" else contextlib.nullcontext


def test_last_value_reads_without_drawing(seq_backend, mode):
    with mode():
        assert last_value("reading") is None
        assert next_value("reading") == 1
        assert last_value("reading") == 1
        assert last_value("reading") == 1
        assert list(next_values("reading", 3)) == [2, 3, 4]
        assert last_value("reading") == 4
        assert next_value("reading") == 5


def test_delete_starts_the_sequence_again(seq_backend, mode):
    with mode():
        assert delete("again") is False
        assert [next_value("again") for _ in range(3)] == [1, 2, 3]
        assert delete("again") is True
        assert last_value("again") is None
        assert delete("again") is False
        assert next_value("again") == 1


def test_delete_then_initial_value(seq_backend, mode):
    with mode():
        next_value("restart")
        delete("restart")
        assert next_value("restart", initial_value=50) == 50
        assert next_value("restart") == 51


def test_initial_value_at_the_call(seq_backend, mode):
    with mode():
        assert next_value("customer", initial_value=1000) == 1000
        assert next_value("customer", initial_value=1000) == 1001
        assert next_value("customer") == 1002
        # The first value of a new sequence only: it never changes one that has values.
        assert next_value("customer", initial_value=5000) == 1003
        assert list(next_values("batch", 3, initial_value=0)) == [0, 1, 2]


def test_increment(seq_backend, mode):
    with mode():
        assert [next_value("odd", increment=2) for _ in range(3)] == [1, 3, 5]
        assert last_value("odd") == 5
        assert next_values("odd", 3, increment=2) == range(7, 13, 2)
        assert next_value("tens", initial_value=10, increment=10) == 10
        assert next_value("tens", initial_value=10, increment=10) == 20


def test_reset_value_cycles(settings, mode):
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    with mode():
        seconds = [next_value("second", initial_value=0, reset_value=3) for _ in range(7)]
        assert seconds == [0, 1, 2, 0, 1, 2, 0]
        assert last_value("second") == 0
        # A sequence already past reset_value starts the cycle again.
        assert [next_value("past") for _ in range(5)] == [1, 2, 3, 4, 5]
        assert next_value("past", reset_value=4) == 1
        assert next_value("past", initial_value=1, reset_value=4, increment=2) == 3
        assert next_value("past", initial_value=1, reset_value=4, increment=2) == 1


def test_bad_options_are_refused(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    with pytest.raises(InvalidSequence, match="reset_value 3 must be greater"):
        next_value("bad", initial_value=3, reset_value=3)
    with pytest.raises(InvalidSequence, match="increment is 0"):
        next_value("bad", increment=0)
    with pytest.raises(InvalidSequence, match="initial_value is -1"):
        next_values("bad", 2, initial_value=-1)
    with pytest.raises(InvalidSequence, match="reset_value 2 must be greater"):
        Sequence("bad", initial_value=2, reset_value=2)
    with pytest.raises(InvalidSequence, match="one value at a time"):
        Sequence("bad", reset_value=5).get_next_values(2)
    assert last_value("bad") is None  # nothing was issued


def test_nowait_without_contention_draws(settings, mode):
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    with mode():
        assert next_value("fast", nowait=True) == 1  # a new sequence
        assert next_value("fast", nowait=True) == 2
        # Its own transaction's lock does not refuse it.
        assert next_values("fast", 2, nowait=True) == range(3, 5)
        assert next_value("fast", initial_value=0, reset_value=6, nowait=True) == 5
        assert next_value("fast", initial_value=0, reset_value=6, nowait=True) == 0


@pytest.mark.redis
def test_redis_store_refuses_what_it_cannot_keep(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    with pytest.raises(SequenceNotSupported, match="nowait=True"):
        next_value("hot", nowait=True)
    with pytest.raises(SequenceNotSupported, match="nowait=True"):
        next_values("hot", 3, nowait=True)
    with pytest.raises(SequenceNotSupported, match="cannot cycle"):
        next_value("hot", initial_value=0, reset_value=60)
    assert last_value("hot") is None  # nothing was issued
    assert not isinstance(SequenceLocked("x"), SequenceNotSupported)


def test_sequence_object(seq_backend, mode):
    with mode():
        claims = Sequence("claims")
        assert claims.get_last_value() is None
        assert next(claims) == 1
        assert list(itertools.islice(claims, 5)) == [2, 3, 4, 5, 6]
        assert claims.get_next_value() == 7
        assert claims.get_next_values(3) == range(8, 11)
        assert claims.get_last_value() == 10
        assert claims.delete() is True
        assert claims.delete() is False
        assert next(claims) == 1
        stepped = Sequence("stepped", initial_value=100, increment=5)
        assert list(itertools.islice(stepped, 3)) == [100, 105, 110]
        assert iter(stepped) is stepped


def test_sequence_object_cycles(settings, mode):
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    with mode():
        hours = Sequence("hour", initial_value=0, reset_value=24)
        assert list(itertools.islice(hours, 26))[-3:] == [23, 0, 1]


def test_database_store_rolls_back_every_option(settings):
    """A value drawn in a transaction that rolls back is issued again: all options."""
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    next_value("cycle", initial_value=0, reset_value=2)
    next_value("inc", increment=5)
    with pytest.raises(RuntimeError), transaction.atomic():
        assert next_value("cycle", initial_value=0, reset_value=2) == 1
        assert next_value("inc", increment=5) == 6
        assert next_value("new", initial_value=7) == 7
        assert next_value("nw", nowait=True) == 1
        assert delete("inc") is True
        raise RuntimeError("rolled back")
    assert next_value("cycle", initial_value=0, reset_value=2) == 1
    assert last_value("inc") == 1  # the delete was rolled back too
    assert next_value("inc", increment=5) == 6
    assert last_value("new") is None
    assert next_value("nw", nowait=True) == 1


@pytest.mark.redis
def test_redis_delete_drops_the_mark_and_the_state(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    settings.SNOWID_SEQUENCES = {"r": {"min_step": 10, "max_step": 10}}
    assert [next_value("r") for _ in range(15)] == list(range(1, 16))
    assert read_marks()["r"] >= 15
    with transaction.atomic():
        assert delete("r") is True  # on its own connection: not rolled back with the caller
        transaction.set_rollback(True)
    assert "r" not in read_marks()
    assert last_value("r") is None
    assert next_value("r") == 1


def test_daily_sequence_last_value_and_delete_act_on_today(seq_backend, settings):
    settings.SNOWID_SEQUENCES = {"invoice": {"kind": "daily"}}
    assert next_value("invoice") == 1
    assert next_value("invoice") == 2
    assert last_value("invoice") == 2
    (stored,) = [name for name in read_marks() if name.startswith("invoice:")]
    assert delete("invoice") is True
    assert stored not in read_marks()
    assert next_value("invoice") == 1
