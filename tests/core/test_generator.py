from __future__ import annotations

import os
import threading

import pytest

from django_snowid.core.generator import SnowflakeGenerator
from django_snowid.core.layout import PRESETS, Layout, NodePart
from django_snowid.exceptions import ClockMovedBackwards, TimeBitsExhausted
from tests.support import MS, FakeClock, in_child

CLASSIC = PRESETS["classic"]
TINY = Layout(41, (NodePart("worker", 2),), 3)  # 8 ids a tick: overflow is easy to reach


def make(clock: FakeClock, layout: Layout = CLASSIC, worker=5, **kwargs) -> SnowflakeGenerator:
    return SnowflakeGenerator(layout, worker, clock=clock, sleep=clock.sleep, **kwargs)


def test_ids_strictly_increase_and_carry_the_worker(clock):
    gen = make(clock)
    ids = [gen.next_id() for _ in range(10_000)]
    assert ids == sorted(set(ids))
    decoded = [CLASSIC.decode(i) for i in ids]
    assert {d.node for d in decoded} == {5}


def test_time_part_is_the_current_tick(clock):
    gen = make(clock, random_bits=lambda bits: 6)
    first = CLASSIC.decode(gen.next_id())
    assert first.tick == (clock.ns - CLASSIC.epoch_ns) // MS
    clock.advance_ms(7.5)
    later = CLASSIC.decode(gen.next_id())
    assert later.tick == first.tick + 7
    assert later.sequence == 6  # a new tick restarts the sequence, at its drawn offset


def test_sequence_overflow_waits_for_the_next_tick(clock):
    gen = make(clock, TINY, worker=1)
    start_tick = (clock.ns - TINY.epoch_ns) // MS
    ids = [gen.next_id() for _ in range(8 * 3 + 1)]
    decoded = [TINY.decode(i) for i in ids]
    # 8 per tick, never spilling into the worker bits
    assert [d.sequence for d in decoded[:9]] == [0, 1, 2, 3, 4, 5, 6, 7, 0]
    assert {d.node for d in decoded} == {1}
    assert decoded[8].tick == start_tick + 1
    assert decoded[-1].tick == start_tick + 3
    assert clock.sleeps, "the generator waited on the clock"
    assert ids == sorted(set(ids))


def test_small_rollback_is_waited_out(clock):
    gen = make(clock, TINY, worker=0, backwards_tolerance_ms=5)
    before = gen.next_id()
    clock.advance_ms(-4)
    after = gen.next_id()
    assert after > before
    assert TINY.decode(after).tick > TINY.decode(before).tick


def test_large_rollback_raises_and_recovers(clock):
    gen = make(clock, backwards_tolerance_ms=5)
    for _ in range(CLASSIC.max_sequence + 1):  # use up the tick so the fast path is closed
        before = gen.next_id()
    clock.advance_ms(-50)
    with pytest.raises(ClockMovedBackwards, match=r"moved backwards by 50\.000 ms") as info:
        gen.next_id()
    assert info.value.tolerance_ms == 5
    with pytest.raises(ClockMovedBackwards):
        gen.next_ids(3)
    clock.advance_ms(60)
    assert gen.next_id() > before


def test_rollback_is_caught_even_while_the_tick_has_ids_left(clock):
    gen = make(clock)
    gen.next_id()
    clock.advance_ms(-100)
    with pytest.raises(ClockMovedBackwards):
        gen.next_id()


def test_resume_after_a_previous_holder(clock):
    # A previous holder of this worker id used ticks up to 20 ms ahead of our clock.
    now_tick = (clock.ns - CLASSIC.epoch_ns) // MS
    with pytest.raises(ClockMovedBackwards):
        make(clock, last_tick=now_tick + 20).next_id()
    gen = make(clock, last_tick=now_tick + 3)
    assert CLASSIC.decode(gen.next_id()).tick == now_tick + 4


def test_next_ids_bulk_path(clock):
    gen = make(clock, TINY, worker=2)
    single = gen.next_id()
    batch = gen.next_ids(50)
    assert len(batch) == 50
    assert batch == sorted(set(batch))
    assert batch[0] > single
    assert gen.next_id() > batch[-1]
    assert gen.next_ids(0) == []
    with pytest.raises(ValueError):
        gen.next_ids(-1)


def test_time_bits_exhausted(clock):
    layout = Layout(10, (NodePart("worker", 2),), 3)  # 1,024 ms after the epoch
    gen = SnowflakeGenerator(layout, 0, clock=clock, sleep=clock.sleep)
    with pytest.raises(TimeBitsExhausted, match=r"ran out at 2020-01-01T00:00:01\.024"):
        gen.next_id()


def test_ids_carry_the_tick_of_the_clock_that_issued_them(clock):
    """An id's time is the clock's tick when it was handed out, never an older one."""
    gen = SnowflakeGenerator(CLASSIC, 1, clock=clock, sleep=clock.sleep)
    for step_ms in (0, 0.4, 1, 3, 250):
        clock.advance_ms(step_ms)
        value = gen.next_id()
        assert CLASSIC.decode(value).tick == (clock() - CLASSIC.epoch_ns) // MS


def test_threads_share_one_generator_without_duplicates():
    gen = SnowflakeGenerator(CLASSIC, 9)
    results: list[list[int]] = [[] for _ in range(4)]

    def work(out: list[int]) -> None:
        out.extend(gen.next_id() for _ in range(50_000))

    threads = [threading.Thread(target=work, args=(out,)) for out in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for out in results:
        assert out == sorted(out) and len(set(out)) == len(out)
    merged = [i for out in results for i in out]
    assert len(set(merged)) == 200_000


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_generator_used_in_a_forked_child_refuses():
    gen = SnowflakeGenerator(CLASSIC, 4)
    gen.next_id()  # the parent is mid-tick: the child must not continue that tick
    result = in_child(gen.next_id)
    assert result.startswith("GeneratorForked:"), result
    assert "forked child" in result
    gen.next_id()  # the parent carries on
