"""Bad input never moves a sequence back nor creates one that django-sequences would refuse:
the compat module and our API refuse, before anything is written, every input that
django-sequences itself refuses (and those it takes but that move a sequence back), and the
table refuses what slips through."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import sequences
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from django_snowid.exceptions import InvalidSequence
from django_snowid.sequences import compat, last_value, next_value, next_values
from django_snowid.sequences import delete as delete_ours
from django_snowid.sequences.models import SequenceMark

pytestmark = pytest.mark.django_db

LONG = "n" * 101
BIG = 2**63

# (what, call on an API module): each is refused by django-sequences on some database, or
# moves a sequence back there ("invoices" is at 50 when they run).
COMPAT_CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("a negative batch", lambda api: api.get_next_values(-3, "invoices")),
    ("a batch that is no integer", lambda api: api.get_next_values("3", "invoices")),
    ("initial_value=None", lambda api: api.get_next_value("fresh", initial_value=None)),
    ("a negative initial_value", lambda api: api.get_next_value("fresh", initial_value=-5)),
    ("a negative first value", lambda api: api.get_next_values(2, "fresh", initial_value=-4)),
    ("an initial_value past BIGINT", lambda api: api.get_next_value("fresh", BIG)),
    ("a name of 101 characters", lambda api: api.get_next_value(LONG)),
    ("a name that is no string", lambda api: api.get_next_value(7)),
    ("a cycle below 0", lambda api: api.get_next_value("fresh", -2, 3)),
    ("a Sequence starting below 0", lambda api: api.Sequence("fresh", -1).get_next_value()),
    ("a Sequence of a long name", lambda api: api.Sequence(LONG).get_next_value()),
]


def _state(api: Any) -> list[Any]:
    return [api.get_last_value("invoices"), api.get_last_value("fresh")]


def _outcome(api: Any, call: Callable[[Any], Any]) -> str:
    try:
        with transaction.atomic():  # a savepoint: the test's transaction survives
            result = call(api)
    except Exception as exc:  # whatever django-sequences raises
        return f"refused: {type(exc).__name__}"
    return f"took it: {result!r}"


@pytest.mark.parametrize("what, call", COMPAT_CALLS, ids=[what for what, _ in COMPAT_CALLS])
def test_compat_refuses_what_django_sequences_refuses_before_writing(what, call):
    for api in (sequences, compat):
        api.get_next_values(50, "invoices")
    theirs = _outcome(sequences, call)
    before = _state(compat)

    with pytest.raises(InvalidSequence):
        call(compat)

    assert _state(compat) == before == [50, None], f"{what} wrote something"
    assert compat.get_next_values(3, "invoices") == range(51, 54), "the sequence went back"
    # For the record: django-sequences refused it, or took it and went back.
    after = sequences.get_next_value("invoices")
    assert theirs.startswith("refused") or after <= 51, (theirs, after)


def test_compat_batch_of_zero_is_empty_and_writes_nothing():
    compat.get_next_values(5, "invoices")
    assert list(compat.get_next_values(0, "invoices")) == []
    assert list(compat.get_next_values(0, "fresh")) == []
    assert _state(compat) == [5, None]


OUR_CALLS: list[tuple[str, Callable[[], Any]]] = [
    ("a negative count", lambda: next_values("invoices", -3)),
    ("a count of 0", lambda: next_values("invoices", 0)),
    ("a count past BIGINT", lambda: next_values("invoices", BIG)),
    ("a negative initial_value", lambda: next_value("fresh", initial_value=-5)),
    ("an initial_value past BIGINT", lambda: next_value("fresh", initial_value=BIG)),
    ("a name of 101 characters", lambda: next_value(LONG)),
    ("a name that is no string", lambda: next_value(7)),  # type: ignore[arg-type]
    ("an increment of 0", lambda: next_values("invoices", 2, increment=0)),
    ("a negative increment", lambda: next_value("invoices", increment=-1)),
    ("a cycle ending below its start", lambda: next_value("fresh", reset_value=0)),
]


@pytest.mark.parametrize("what, call", OUR_CALLS, ids=[what for what, _ in OUR_CALLS])
def test_our_api_refuses_before_writing(settings, what, call):
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    next_values("invoices", 50)
    with pytest.raises(InvalidSequence):
        call()
    assert [last_value("invoices"), last_value("fresh")] == [50, None], f"{what} wrote something"
    assert next_values("invoices", 3) == range(51, 54)
    delete_ours("invoices")


@pytest.mark.parametrize(
    "name, value",
    [("below-zero", -1), ("n" * 101, 1), ("far-below", -(2**62))],
    ids=["a value below 0", "a name of 101 characters", "a value far below 0"],
)
def test_the_table_refuses_what_slips_through(name, value):
    with pytest.raises(IntegrityError), transaction.atomic():
        SequenceMark.objects.create(name=name, value=value)
    assert not SequenceMark.objects.filter(name=name).exists()


def test_the_table_takes_a_daily_name_of_100_characters():
    SequenceMark.objects.create(name=f"{'d' * 100}:20260101", value=0)


@pytest.mark.django_db(transaction=True)
def test_the_migration_names_rows_that_break_the_limits_and_changes_nothing():
    before = [("snowid_sequences", "0001_initial")]
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes("snowid_sequences")
    MigrationExecutor(connection).migrate(before)
    try:
        SequenceMark.objects.create(name="went-back", value=-4_611_686_018_427_387_903)
        SequenceMark.objects.create(name="fine", value=3)
        with pytest.raises(RuntimeError, match=r"'went-back' \(value -4611686018427387903\)"):
            MigrationExecutor(connection).migrate(latest)
        assert SequenceMark.objects.get(name="went-back").value < 0  # nothing changed
        SequenceMark.objects.filter(name="went-back").update(value=0)
    finally:
        MigrationExecutor(connection).migrate(latest)
    with pytest.raises(IntegrityError), transaction.atomic():
        SequenceMark.objects.create(name="below", value=-1)
