"""The generator of a test process: while a tool moves the clock, ids carry its time,
never wait and never repeat; otherwise it is the plain generator (injected clocks)."""

from __future__ import annotations

import pytest

from django_snowid.core.layout import PRESETS, Layout, NodePart
from django_snowid.core.travel import TimeTravelGenerator
from django_snowid.exceptions import ClockMovedBackwards, TimeBitsExhausted, WorkerLeaseLost
from tests.support import MS, FakeClock

CLASSIC = PRESETS["classic"]
TINY = Layout(41, (NodePart("worker", 2),), 3)  # 8 ids a tick
YEAR_MS = 365 * 24 * 3600 * 1000


class Moved:
    """What ``clock_mover()`` answers, set by the test."""

    def __init__(self) -> None:
        self.by: str | None = None

    def __call__(self) -> str | None:
        return self.by


@pytest.fixture
def moved() -> Moved:
    return Moved()


def make(clock: FakeClock, moved: Moved, layout: Layout = TINY, **kwargs) -> TimeTravelGenerator:
    kwargs.setdefault("book", {})
    return TimeTravelGenerator(layout, 1, clock=clock, sleep=clock.sleep, moved=moved, **kwargs)


def ticks(layout: Layout, ids: list[int]) -> set[int]:
    return {layout.decode(i).tick for i in ids}


def test_a_standing_clock_borrows_the_next_ticks_and_never_waits(clock, moved):
    gen = make(clock, moved)
    moved.by = "freezegun"
    frozen = TINY.tick_of_ns(clock.ns)
    ids = [gen.next_id() for _ in range(20)] + gen.next_ids(20)
    assert clock.sleeps == []
    assert len(set(ids)) == 40
    assert ticks(TINY, ids) == set(range(frozen, frozen + 5))  # 8 ids a tick, from 0 or an offset


def test_the_clock_moved_back_to_a_moment_used_before_repeats_no_id(clock, moved):
    book: dict = {}
    gen = make(clock, moved, book=book)
    moved.by = "time-machine"
    clock.advance_ms(2 * YEAR_MS)
    first = gen.next_ids(5)
    clock.advance_ms(-YEAR_MS)
    in_between = gen.next_ids(5)
    clock.advance_ms(YEAR_MS)
    again = gen.next_ids(5)
    # A new generator of the same layout and worker (a new lease, the same id) shares it.
    again += make(clock, moved, book=book).next_ids(5)
    ids = first + in_between + again
    assert len(set(ids)) == len(ids)
    assert min(ticks(TINY, again)) == TINY.tick_of_ns(clock.ns)


def test_after_a_jump_to_the_future_the_host_clock_issues_again(clock, moved):
    gen = make(clock, moved, CLASSIC)
    before = gen.next_id()
    moved.by = "time-machine"
    clock.advance_ms(10 * YEAR_MS)
    future = gen.next_id()
    assert CLASSIC.decode(future).tick == CLASSIC.tick_of_ns(clock.ns)
    moved.by = None
    clock.advance_ms(-10 * YEAR_MS + 1)
    after = gen.next_id()  # not ClockMovedBackwards: the host's last tick is unchanged
    assert before < after < future
    assert gen.last_tick == CLASSIC.decode(after).tick


def test_the_host_clock_reaching_a_tick_a_moved_clock_used_goes_on_from_it(clock, moved):
    gen = make(clock, moved)
    moved.by = "freezegun"
    clock.advance_ms(2)
    ahead = gen.next_ids(6)
    moved.by = None
    clock.advance_ms(-2)
    now = gen.next_ids(4) + [gen.next_id() for _ in range(12)]
    assert len(set(ahead + now)) == 22
    assert clock.sleeps  # unmoved, a full tick is waited out as always


def test_unmoved_it_refuses_a_clock_behind_as_the_plain_generator_does(clock, moved):
    gen = make(clock, moved, backwards_tolerance_ms=5)
    gen.next_id()
    clock.advance_ms(-100)
    with pytest.raises(ClockMovedBackwards):
        gen.next_id()
    moved.by = "freezegun"  # the same step, made by a tool in a test: followed
    assert TINY.decode(gen.next_id()).tick == TINY.tick_of_ns(clock.ns)


def test_the_guard_runs_before_each_new_tick_of_a_moved_clock(clock, moved):
    entered = []

    def guard() -> None:
        if len(entered) == 3:
            raise WorkerLeaseLost("lost")
        entered.append(1)

    gen = make(clock, moved, guard=guard)
    moved.by = "freezegun"
    gen.next_ids(16)  # at most three ticks
    assert 2 <= len(entered) <= 3
    with pytest.raises(WorkerLeaseLost):
        gen.next_ids(16)


def test_a_moved_clock_before_the_epoch_is_refused(clock, moved):
    gen = make(clock, moved)
    moved.by = "freezegun"
    clock.ns = TINY.epoch_ns - MS
    with pytest.raises(TimeBitsExhausted, match="before the epoch"):
        gen.next_id()


def test_generators_of_one_layout_and_worker_share_the_process_book(clock, moved):
    moved.by = "freezegun"
    clock.ns += 123_456 * MS  # a tick no other test of this process used
    first = TimeTravelGenerator(TINY, 2, clock=clock, moved=moved).next_ids(10)
    second = TimeTravelGenerator(TINY, 2, clock=clock, moved=moved).next_ids(10)
    other = TimeTravelGenerator(TINY, 3, clock=clock, moved=moved).next_ids(10)
    assert len(set(first + second)) == 20
    assert min(ticks(TINY, other)) == TINY.tick_of_ns(clock.ns)  # a worker of its own
