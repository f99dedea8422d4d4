"""The host's clocks read through freezegun and time-machine, and the clock they move."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

from django_snowid.core.clocks import clock_mover, moved_time_ns, real_monotonic, real_time_ns
from tests.travel_cases import FUTURE, PAST, TOOLS, travel

FUTURE_NS = int(FUTURE.timestamp()) * 10**9 + FUTURE.microsecond * 1000


def test_nothing_moves_the_clock_outside_a_block():
    assert clock_mover() is None
    assert abs(moved_time_ns() - time.time_ns()) < 10**9


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("tick", [None, False], ids=["default", "still"])
def test_inside_a_block_the_tool_is_named_and_the_real_clocks_go_on(tool, tick):
    wall, steady = time.time_ns(), time.monotonic()
    with travel(tool, PAST, tick=tick):
        assert clock_mover() == tool
        assert abs(real_time_ns() - wall) < 60 * 10**9
        assert 0 <= real_monotonic() - steady < 60
    assert clock_mover() is None


@pytest.mark.parametrize("tool", TOOLS)
def test_the_moved_clock_is_exact_to_the_microsecond(tool):
    # freezegun's time.time_ns() goes through a float: 250 ms would read 249.999...
    with travel(tool, FUTURE, tick=False):
        assert moved_time_ns() == FUTURE_NS
        assert datetime.fromtimestamp(moved_time_ns() / 1e9, timezone.utc) == FUTURE
