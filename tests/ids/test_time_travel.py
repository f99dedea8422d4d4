"""Tests that freeze or move the clock (freezegun, time-machine) in a pytest-django test:
rows made inside the block carry the moved time, never repeat, and the rows after it
carry the real time (``travel_cases.py`` holds what the TestCase twin shares)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from django.test import override_settings

from tests.support import run_python
from tests.testapp.models import Product
from tests.travel_cases import (
    FUTURE,
    MANY,
    MANY_CREATES,
    PAST,
    TOOLS,
    created,
    problems_of_later_row,
    problems_of_moved_rows,
    stands_still,
    travel,
    unused,
)

pytestmark = pytest.mark.django_db


def make_rows(count: int) -> list[int]:
    return [Product.objects.create(name=str(n)).pk for n in range(count)]


@pytest.mark.parametrize("source", ["database", "static"], indirect=True)
@pytest.mark.parametrize("moment", [PAST, FUTURE], ids=["past", "future"])
@pytest.mark.parametrize("tick", [None, False], ids=["default", "still"])
@pytest.mark.parametrize("tool", TOOLS)
def test_rows_inside_the_block_carry_its_time_and_rows_after_it_the_real_time(
    tool, tick, moment, source
):
    moment = unused(moment)
    with travel(tool, moment, tick=tick):
        moved = make_rows(10)
    before = datetime.now(timezone.utc)
    later = Product.objects.create(name="later").pk
    assert problems_of_moved_rows(moved, moment, still=stands_still(tool, tick)) == []
    assert problems_of_later_row(later, before) == []
    if stands_still(tool, tick):
        assert {created(pk) for pk in moved} == {moment}


@pytest.mark.timeout(60)  # a generator that waits for a standing clock never returns
@pytest.mark.parametrize("source", ["database"], indirect=True)
@pytest.mark.parametrize("tool", TOOLS)
def test_a_bulk_create_of_more_than_a_millisecond_holds_borrows_the_next_ones(tool, source):
    moment = unused(PAST)
    with travel(tool, moment, tick=False):
        rows = Product.objects.bulk_create(Product(name=str(n)) for n in range(MANY))
    pks = [row.pk for row in rows]
    assert problems_of_moved_rows(pks, moment, still=True, borrowed_ms=3) == []
    assert pks == sorted(pks)  # one call, increasing ids, as outside a block
    assert created(pks[-1]) > moment  # the classic layout holds 4,096 ids a millisecond


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tool", TOOLS)
def test_many_creates_in_one_frozen_millisecond_never_wait(tool):
    moment = unused(FUTURE)
    with travel(tool, moment, tick=False):
        pks = make_rows(MANY_CREATES)
    before = datetime.now(timezone.utc)
    later = Product.objects.create(name="later").pk
    assert problems_of_moved_rows(pks, moment, still=True, borrowed_ms=1) == []
    assert created(pks[-1]) > moment
    assert problems_of_later_row(later, before) == []


@pytest.mark.parametrize("source", ["database", "static"], indirect=True)
@pytest.mark.parametrize("tool", TOOLS)
def test_a_moment_used_before_never_repeats_an_id(tool, source):
    # The same frozen millisecond twice, with a new generator in between (a settings
    # change drops it and releases its lease; the worker id may come back).
    moment = unused(PAST)
    with travel(tool, moment, tick=False):
        first = make_rows(5)
    settings_changed = override_settings(SNOWID_CLOCK_BACKWARDS_TOLERANCE_MS=6.0)
    with settings_changed, travel(tool, moment, tick=False):
        second = make_rows(5)
    with travel(tool, moment, tick=False):
        third = make_rows(5)
    assert problems_of_moved_rows(first + second + third, moment, still=True) == []


@pytest.mark.parametrize("tool", TOOLS)
def test_lookups_by_creation_time_find_the_moved_rows(tool):
    then, later = unused(PAST), unused(FUTURE)
    with travel(tool, then):
        old = make_rows(3)
    with travel(tool, later):
        new = make_rows(2)
    now = Product.objects.create(name="now").pk

    def pks(**lookup) -> list[int]:
        return sorted(Product.objects.filter(**lookup).values_list("pk", flat=True))

    assert pks(pk__created_before=then + timedelta(days=1)) == sorted(old)
    assert pks(pk__created_after=later) == sorted(new)
    assert pks(pk__created_range=(then + timedelta(days=1), later)) == [now]


@pytest.mark.parametrize("tool", TOOLS)
def test_the_admin_shows_the_frozen_time(tool, admin_client):
    moment = unused(PAST)
    with travel(tool, moment, tick=False):
        Product.objects.create(name="then")
    page = admin_client.get("/admin/testapp/product/").content.decode()
    assert moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] in page


OUTSIDE_TESTS = """
import django
django.setup()
import time_machine
import django_snowid
from django_snowid.ids import issuer
from django_snowid.testing import follows_moved_clocks
django_snowid.next_id()
print(type(issuer.get_generator()).__name__, follows_moved_clocks())
with time_machine.travel("2021-03-14"):
    try:
        django_snowid.next_id()
    except Exception as exc:
        print(type(exc).__name__, exc)
"""


@pytest.mark.django_db(transaction=True)
def test_outside_a_test_environment_a_moved_clock_is_refused_naming_the_tool():
    # A process where Django's test environment is not set up (a deployment, a script)
    # keeps the plain generator: a clock moved back is refused, and the refusal says why.
    done = run_python(OUTSIDE_TESTS)
    plain, refusal = done.stdout.splitlines()
    assert plain == "SnowflakeGenerator False"
    assert refusal.startswith("ClockMovedBackwards ")
    assert "moved by time-machine" in refusal
