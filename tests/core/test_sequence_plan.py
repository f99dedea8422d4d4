"""The pure part of named sequences: names, days, rates, steps, templates."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from django_snowid.core.sequence_plan import (
    LOW_WATER_S,
    TARGET_S,
    WINDOW_S,
    Rates,
    Template,
    check_name,
    day_stamp,
    needs_raise,
    plan_step,
    storage_name,
)


@pytest.mark.parametrize("name", ["", "a b", "a{b}", "a:b", "x" * 101, None, 5, "é"])
def test_illegal_names(name):
    with pytest.raises(ValueError, match="not a sequence name"):
        check_name(name)


def test_day_in_a_zone_and_storage_name():
    instant = datetime(2026, 3, 29, 0, 30, tzinfo=ZoneInfo("UTC")).timestamp()
    assert day_stamp(instant, ZoneInfo("UTC")) == "20260329"
    assert day_stamp(instant, ZoneInfo("America/New_York")) == "20260328"
    assert storage_name("inv", "20260328") == "inv:20260328"
    assert storage_name("inv", None) == "inv"


def test_rates_last_second_and_window():
    now = 10 * WINDOW_S + 100
    rates = Rates(
        second=now, this_second=7, last_second=50, window=now - 100, in_window=600, in_previous=0
    )
    assert rates.last_second_rate(now) == 50
    assert rates.last_second_rate(now + 1) == 7
    assert rates.last_second_rate(now + 2) == 0
    assert rates.average_rate(now) == 600 / WINDOW_S
    assert rates.estimate(now) == 50
    # Next window: the previous one counts for the part still inside the last 300 s.
    assert rates.average_rate(now - 100 + WINDOW_S + 150) == 600 * 0.5 / WINDOW_S
    assert rates.estimate(now + 2 * WINDOW_S) == 0


@given(
    rate=st.floats(min_value=0, max_value=1e7),
    bounds=st.tuples(st.integers(1, 10**6), st.integers(1, 10**6)).map(sorted),
    need=st.integers(1, 10**7),
)
def test_plan_step_stays_in_bounds_and_covers_the_need(rate, bounds, need):
    low, high = bounds
    step = plan_step(rate, min_step=low, max_step=high, need=need)
    assert step >= need
    assert low <= step <= high or step == need
    if need <= low and rate * TARGET_S <= low:
        assert step == low  # idle: the minimum
    if rate * TARGET_S >= high >= need:
        assert step == high  # busy: the maximum


def test_needs_raise():
    assert needs_raise(0, 0.0)
    assert not needs_raise(1, 0.0)
    assert needs_raise(LOW_WATER_S * 10 - 1, 10.0)
    assert not needs_raise(LOW_WATER_S * 10, 10.0)


def test_template():
    template = Template("INV-{day}-{value:06d}")
    assert template.render(42, "20261123") == "INV-20261123-000042"
    assert template.padded_length() == len("INV-20261123-999999")
    assert Template("C{value}").padded_length() == 2
    for bad in ["INV-{day}", "{value}{when}", "{value:x}", "{day:%Y}-{value}", "{value!r}", "{"]:
        with pytest.raises(ValueError, match="template"):
            Template(bad)
