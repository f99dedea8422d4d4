"""django_snowid.sequences.compat against django-sequences itself: the same calls give the
same values, in autocommit and inside a transaction; and the import of django-sequences'
rows, after which every sequence continues above its last value."""

from __future__ import annotations

import contextlib
import inspect
import itertools
import json
from io import StringIO
from types import ModuleType
from typing import Any

import pytest
import sequences
from django.core.management import CommandError, call_command
from django.db import transaction

from django_snowid.sequences import compat, last_value, next_value
from django_snowid.sequences.stores.database import read_marks

pytestmark = pytest.mark.django_db(transaction=True)

PUBLIC = ["get_next_value", "get_next_values", "get_last_value", "delete", "Sequence"]


def test_same_names_signatures_and_defaults():
    for name in PUBLIC:
        assert _same_parameters(getattr(sequences, name), getattr(compat, name)), name
    for method in ["get_next_value", "get_next_values", "get_last_value", "delete"]:
        assert _same_parameters(
            getattr(sequences.Sequence, method), getattr(compat.Sequence, method)
        ), method


def _same_parameters(theirs: Any, ours: Any) -> bool:
    """Names, kinds and defaults of the parameters (our annotations aside)."""

    def shape(function: Any) -> list[tuple[str, Any, Any]]:
        return [
            (p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()
        ]

    return shape(theirs) == shape(ours)


def _scenario(api: ModuleType) -> list[Any]:
    """Every public call of django-sequences' README, and some corners; what each returned."""
    seen: list[Any] = [api.get_last_value()]
    seen += [api.get_next_value() for _ in range(3)]
    seen += [api.get_next_value("cases"), api.get_next_value("cases")]
    seen += [api.get_next_value("invoices"), api.get_last_value("invoices")]
    seen += [api.get_next_value("customers", initial_value=1000)]
    seen += [api.get_next_value("customers", initial_value=5000)]  # ignored: it exists
    seen += [api.get_next_value("customers")]
    seen += [api.get_next_value("seconds", initial_value=0, reset_value=3) for _ in range(7)]
    seen += [api.get_last_value("seconds")]
    seen += [api.get_next_values(10), api.get_next_values(10)]
    seen += [api.get_next_values(5, "batch", initial_value=100), api.get_next_values(2, "batch")]
    seen += [api.get_next_value("past") for _ in range(5)]
    seen += [api.get_next_value("past", reset_value=4), api.get_next_value("past", 1, 4)]
    company = "invoices—b1f6cdef-367f-49e4-9cf5-bb0d34707af8"  # any name, as theirs
    seen += [api.get_next_value(company), api.delete(company), api.delete(company)]
    seen += [api.get_last_value(company), api.get_next_value(company)]
    seen += [api.get_next_value("nw", nowait=True), api.get_next_values(3, "nw", nowait=True)]
    claims = api.Sequence("claims")
    seen += [claims.get_last_value(), claims.get_next_value(), claims.get_next_value()]
    seen += [claims.get_last_value(), next(claims), list(itertools.islice(claims, 3))]
    seen += [claims.get_next_values(4), claims.delete(), claims.delete(), next(claims)]
    hours = api.Sequence("hours", 0, 3)
    seen += [list(itertools.islice(hours, 5)), hours.get_next_value(nowait=True)]
    seen += [iter(hours) is hours]
    for bad in (lambda: api.get_next_value("x", 5, 5), lambda: api.Sequence("x", 2, 1)):
        with pytest.raises(ValueError, match="reset_value must be greater than initial_value"):
            bad()
    seen += [api.get_last_value("x")]
    return seen


@pytest.mark.parametrize("mode", ["autocommit", "atomic"])
def test_same_values_as_django_sequences(mode):
    context = transaction.atomic if mode == "atomic" else contextlib.nullcontext
    with context():
        theirs = _scenario(sequences)
    with context():
        ours = _scenario(compat)
    assert ours == theirs
    assert theirs[:4] == [None, 1, 2, 3]  # the scenario ran


def test_same_values_after_a_rollback():
    results = []
    for api in (sequences, compat):
        api.get_next_value("gapless")
        with pytest.raises(RuntimeError), transaction.atomic():
            api.get_next_value("gapless")
            api.get_next_value("gapless", 0, 5)
            api.get_next_values(3, "fresh")
            raise RuntimeError("rolled back")
        results.append([api.get_next_value("gapless"), api.get_last_value("fresh")])
    assert results[0] == results[1] == [2, None]


@pytest.mark.redis
def test_compat_is_gapless_whatever_the_backend(settings):
    """compat always draws from the database, in the caller's transaction."""
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    assert compat.get_next_value("invoice") == 1
    with pytest.raises(RuntimeError), transaction.atomic():
        assert compat.get_next_value("invoice") == 2
        raise RuntimeError("rolled back")
    assert compat.get_next_value("invoice") == 2
    # One sequence with our API: the Redis store continues above the database's values.
    assert next_value("invoice") == 3
    assert compat.get_next_value("invoice") > 3


def test_one_sequence_with_our_api(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    assert compat.get_next_value("shared") == 1
    assert next_value("shared") == 2
    assert compat.get_last_value("shared") == last_value("shared") == 2


# ------------------------------------------------------------------ the import


def _import(*args: str) -> str:
    out = StringIO()
    call_command("snowid_sequences", "--import-django-sequences", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("mode", ["autocommit", "atomic"])
def test_import_continues_above_django_sequences(settings, mode):
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    context = transaction.atomic if mode == "atomic" else contextlib.nullcontext
    with context():
        for _ in range(5):
            sequences.get_next_value("invoice")
        sequences.get_next_value("customer", initial_value=1000)
        sequences.get_next_value("seconds", initial_value=0, reset_value=60)
        sequences.get_next_values(10, "batch")
        assert "Imported 4 sequences from sequences_sequence." in _import()
    assert compat.get_next_value("invoice") == 6
    assert next_value("invoice") == 7
    assert compat.get_next_value("customer", initial_value=1000) == 1001
    assert compat.get_next_value("seconds", 0, 60) == 1
    assert compat.get_next_values(10, "batch") == range(11, 21)
    # Again: nothing changes (ours went on above django-sequences' values).
    _import()
    assert compat.get_next_value("invoice") == 8
    assert read_marks()["batch"] == 20


def test_import_leaves_a_higher_mark_and_reports(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    sequences.get_next_value("ahead")
    for _ in range(3):
        next_value("ahead")
    out = _import("--verbosity", "2")
    assert "ahead: 1 -> continues above 3" in out
    rows = json.loads(_import("--json"))
    assert rows == [{"name": "ahead", "last": 1, "continues_above": 3}]
    assert next_value("ahead") == 4


@pytest.mark.redis
def test_import_lifts_a_redis_state_below_the_last_value(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    settings.SNOWID_SEQUENCES = {"order": {"min_step": 10, "max_step": 10}}
    assert next_value("order") == 1  # Redis: cur 1, max 10
    for _ in range(50):
        sequences.get_next_value("order")  # django-sequences went on to 50
    _import()
    assert next_value("order") > 50
    sequences.get_next_value("fresh")  # no Redis state: the next raise starts above
    _import()
    assert next_value("fresh") == 2
    _import()  # idempotent: a state above the value is left as it is
    assert next_value("fresh") == 3


def test_import_without_the_table():
    with pytest.raises(CommandError, match="has no table 'nope'"):
        _import("--table", "nope")


def test_import_refuses_a_daily_name(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    settings.SNOWID_SEQUENCES = {"daily": {"kind": "daily"}}
    sequences.get_next_value("daily")
    with pytest.raises(CommandError, match="declared daily"):
        _import()


def test_w800_until_the_rows_are_imported(settings):
    from django.core.checks import run_checks

    settings.SNOWID_SEQUENCE_BACKEND = "database"

    def w800() -> list[str]:
        found = run_checks(databases=["default"], include_deployment_checks=False)
        return [m.msg for m in found if m.id == "django_snowid.W800"]

    assert w800() == []  # no django-sequences rows
    for _ in range(3):
        sequences.get_next_value("invoice")
    sequences.get_next_value("cases")
    next_value("cases")  # ours is already at 1: not behind
    (msg,) = w800()
    assert "1 django-sequences sequences ('invoice')" in msg
    assert "--import-django-sequences" in msg
    assert all(m.id != "django_snowid.W800" for m in run_checks(databases=[]))
    _import()
    assert w800() == []
    sequences.get_next_value("invoice")  # old code drew again after the import: E801 says so
    assert w800() == []


def test_names_only_compat_takes_are_listed(settings):
    """The command and the status page list sequences whose names our API refuses."""
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    compat.get_next_value("invoices—b1f6 cdef")
    out = StringIO()
    call_command("snowid_sequences", "--json", stdout=out)
    (row,) = json.loads(out.getvalue())
    assert row["name"] == "invoices—b1f6 cdef" and row["current"] == 1


def test_import_takes_names_only_compat_takes(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    settings.SNOWID_SEQUENCES_UNKNOWN = "refuse"  # undeclared: still imported
    for _ in range(4):
        sequences.get_next_value("invoices—b1f6 cdef")
    _import()
    assert compat.get_next_value("invoices—b1f6 cdef") == 5
