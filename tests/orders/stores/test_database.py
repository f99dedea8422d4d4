"""The database order store's one statement and the pure core agree, state by state.

As ``tests/orders/stores/test_redis.py`` does for the Lua of the Redis store: the same states
and times go through the database store (its clock set by the test) and through
``core.order_stream.reserve``; the outcome and the row left behind must match. On the
database SNOWID_TEST_DB names, in autocommit (each statement its own transaction, as
the store runs outside a transaction of the caller's).
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from django_snowid.core.order_blocks import Block
from django_snowid.core.order_keys import KeyRecord, KeyWindow
from django_snowid.core.order_stream import Reserved, reserve_block
from django_snowid.models import OrderStreamState
from django_snowid.orders.stores import MISSING, DatabaseOrderStore, RecoverArgs, ReserveArgs
from django_snowid.orders.stores.database import claim
from tests.order_cases import (
    NOW,
    core_keyed,
    core_reserve,
    keyed_reservations,
    picked,
    reservations,
)
from tests.testapp.models import ShopOrder

pytestmark = pytest.mark.django_db(transaction=True)

STREAM = "property"
property_settings = hypothesis_settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def _set_row(last: tuple[int, int]) -> None:
    OrderStreamState.objects.update_or_create(
        name=STREAM, defaults={"second": last[0], "sequence": last[1]}
    )


def _row() -> tuple[int, int] | None:
    return OrderStreamState.objects.filter(name=STREAM).values_list("second", "sequence").first()


def _args(case: dict[str, Any]) -> ReserveArgs:
    return ReserveArgs(
        offset=case["offset"],
        cap=case["cap"],
        wanted=case["count"],
        first_sequence=case["first_sequence"],
        max_lead=case["max_lead"],
    )


# The same hand-picked cases as the Redis scripts' test, and the ones the statement
# leaves to the locked path.
HAND_PICKED = [
    picked(1, 10),  # clock a full second behind, that second full: the next one
    picked(3, 10, offset=-5 * 3600),  # the same, three seconds, UTC-5
    picked(0, 10, offset=19_800),  # the current second full (UTC+5:30): wait
    picked(5, 10),  # full at the bound: nothing, wait for the clock
    picked(9, 2),  # beyond the bound: the clock is behind
    picked(-2, 7, first_sequence=4),  # a new second, random start
    picked(0, 8, count=5),  # a block gets the rest of the second
    picked(-1, 3, count=12),  # a block larger than a new second
    picked(0, 2, count=2, first_sequence=10),  # the same: in the current second it fits
    picked(5, 3),  # at the bound, room left: continues
]


def _with_cases(flag: str) -> Any:
    """The hand-picked cases, with ``flag`` False and True."""

    def decorate(test: Any) -> Any:
        for each in HAND_PICKED:
            for value in (False, True):
                test = example(case=each, **{flag: value})(test)
        return test

    return decorate


@property_settings
@given(case=reservations(), issued_now=st.booleans())
@_with_cases("issued_now")
def test_the_store_agrees_with_core(case, issued_now):
    """Through a statement, or the locked path when the statement grants nothing;
    ``issued_now``: the store issued a number in this second a moment ago (it then
    sends the statement without the restart)."""
    # Half a millisecond in, so that the store reads the same millisecond back.
    moment = case["unix"] + (case["micros"] // 1000 + 0.5) / 1000
    store = DatabaseOrderStore(clock=lambda: moment)
    if issued_now:
        _set_row((case["unix"] + case["offset"] - 1, 0))
        assert isinstance(store.reserve(STREAM, _args(case | {"count": 1})), Reserved)
    _set_row(case["last"])
    outcome = store.reserve(STREAM, _args(case))
    state, expected = core_reserve(case)
    assert (outcome, _row()) == (expected, state)


@property_settings
@given(case=reservations(), continuing=st.booleans())
@_with_cases("continuing")
def test_the_statement_grants_what_core_grants_or_changes_nothing(case, continuing):
    """The statement alone writes exactly when core grants the whole block on the
    clock's second (a new second; not ``continuing``) or on the row's (the same second,
    or a clock behind it within the lead), and then writes what core does."""
    _set_row(case["last"])
    now = case["unix"] + case["offset"]
    reserved = claim(connection, STREAM, now, _args(case), continuing=continuing)
    state, expected = core_reserve(case)
    seconds = {case["last"][0]} if continuing else {now, case["last"][0]}
    whole = (
        isinstance(expected, Reserved)
        and expected.count == case["count"]
        and expected.local_second in seconds
        and expected.local_second >= now
    )
    if whole:
        assert (reserved, _row()) == (expected, state)
    else:
        assert (reserved, _row()) == (None, case["last"])


def _record_row() -> KeyRecord:
    row = OrderStreamState.objects.values_list("key_id", "key_next", "key_next_from").get(
        name=STREAM
    )
    return KeyRecord(row[0] or "", row[1] or "", row[2] or 0)


def _as_reserved(outcome: Any) -> Any:
    if isinstance(outcome, Block):
        return Reserved(outcome.local_second, outcome.first_sequence, outcome.count)
    return outcome


# A key window whose record needs no decision: the one statement alone reserves.
_STEADY = KeyWindow("0123456789abcdef", -(2**62), NOW + 60, "fedcba9876543210")


@property_settings
@given(case=keyed_reservations(), block=st.booleans())
@example(
    case=picked(-1, 0)
    | {"record": KeyRecord("0123456789abcdef", "fedcba9876543210", NOW + 60), "window": _STEADY},
    block=False,
)
@example(case=picked(0, 3) | {"record": KeyRecord(), "window": _STEADY}, block=True)
def test_the_store_agrees_with_core_on_keys(case, block):
    """With a key window: the outcome, the row and its key record are core's
    (``order_stream.keyed`` of ``order_keys.agree``), through the statement or the locked
    path, for a number and for a block."""
    moment = case["unix"] + (case["micros"] // 1000 + 0.5) / 1000
    store = DatabaseOrderStore(clock=lambda: moment)
    _set_row(case["last"])
    record = case["record"]
    OrderStreamState.objects.filter(name=STREAM).update(
        key_id=record.key_id or None,
        key_next=record.next_id or None,
        key_next_from=record.next_from or None,
    )
    args = _args(case)._replace(keys=case["window"])
    if block:
        outcome = _as_reserved(store.reserve_block(STREAM, args))
        state, record_after, result = core_keyed(case, reserve_block)
        result = _as_reserved(result)  # a block's time left is the store's clock's
    else:
        outcome = store.reserve(STREAM, args)
        state, record_after, result = core_keyed(case)
    assert (outcome, _row(), _record_row()) == (result, state, record_after)


def test_a_stream_without_a_row_is_missing():
    args = ReserveArgs(offset=0, cap=10, wanted=1, first_sequence=1, max_lead=5)
    assert claim(connection, "nowhere", NOW, args) is None
    assert DatabaseOrderStore(clock=lambda: NOW).reserve("nowhere", args) is MISSING
    assert not OrderStreamState.objects.filter(name="nowhere").exists()


@pytest.mark.parametrize("in_transaction", [False, True])
def test_a_number_costs_one_statement(settings, in_transaction):
    settings.SNOWID_ORDER_BACKEND = "database"
    ShopOrder.objects.create(user_id=1)  # the stream exists
    field = ShopOrder._meta.get_field("number")
    blocks = field.issuer()._blocks
    assert blocks is not None
    # A block of one number: the first number's block may or may not have grown the next
    # (it does when both fall in one second), and a bigger one leaves the store ahead.
    blocks.drop()
    blocks.sizer.size = 1
    atomic = transaction.atomic() if in_transaction else contextlib.nullcontext()
    with atomic, CaptureQueriesContext(connection) as queries:
        number = field.issuer().next_number(3)
    assert [q["sql"].split()[0] for q in queries] == ["UPDATE"]
    assert field.format.position(number) == OrderStreamState.objects.values_list(
        "second", "sequence"
    ).get(name=field.stream)


def test_a_new_second_costs_one_statement():
    """A store that has issued nothing yet (or nothing in this second) restarts the
    sequence in the same one statement."""
    _set_row((NOW - 5, 7))
    args = ReserveArgs(offset=0, cap=10, wanted=1, first_sequence=1, max_lead=5)
    with CaptureQueriesContext(connection) as queries:
        outcome = DatabaseOrderStore(clock=lambda: NOW + 0.5).reserve(STREAM, args)
    assert [q["sql"].split()[0] for q in queries] == ["UPDATE"]
    assert (outcome, _row()) == (Reserved(NOW, 1, 1), (NOW, 1))


@property_settings
@given(
    offset=st.sampled_from([0, 19_800, -5 * 3600]),
    row=st.none() | st.tuples(st.integers(-3, 3), st.integers(0, 20)),
    database=st.none() | st.tuples(st.integers(-3, 3), st.integers(0, 20)),
    first_sequence=st.integers(1, 10),
    force=st.booleans(),
)
def test_recover_dry_run_answers_what_the_statement_does(
    offset, row, database, first_sequence, force
):
    """``snowid_recover --dry-run`` on the database store answers with
    ``core.order_stream.resume``; the real recovery runs one upsert. Same states, same answer,
    and the dry run writes nothing."""
    local = NOW + offset
    row = None if row is None else (local + row[0], row[1])
    database = None if database is None else (local + database[0], database[1])
    OrderStreamState.objects.filter(name=STREAM).delete()
    if row is not None:
        _set_row(row)
    store = DatabaseOrderStore(clock=lambda: NOW + 0.5)
    args = RecoverArgs(offset=offset, first_sequence=first_sequence, force=force)
    planned = store.recover(STREAM, database, args._replace(dry_run=True))
    assert _row() == row
    assert store.recover(STREAM, database, args) == planned
    assert _row() == planned[1]
