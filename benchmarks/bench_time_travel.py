"""What following a clock that tests move costs, in tests and (nothing) outside them.

    python benchmarks/bench_time_travel.py [--calls 4000000] [--repeat 3]

Compared in one run, in interleaved chunks (``benchmarks.timing.interleaved_rates``), ids a
second of ``next_id()`` at the limit (the classic layout: 4,096 ids a millisecond, so a
tick is entered every 4,096 ids) and of ``next_ids(1000)``:

- "before": the generator's slow path as it was before the time-travel support (a copy of
  it, below), the baseline;
- "outside tests": ``django_snowid.next_id()`` in a process where Django's test
  environment is not set up: the plain ``SnowflakeGenerator``, as a deployment runs it;
- "test process": the same call after ``setup_test_environment()``, no tool moving the
  clock (the generator of tests, which also records every tick it uses);
- then, not interleaved (entering a freezegun block scans every module): the same call
  inside ``freeze_time()`` and ``time_machine.travel(tick=False)``, where a full
  millisecond borrows the next one instead of waiting.

Ratio = ids a second / "before"; the goal outside tests is 1.00 (within the noise, which
the two runs of the same code, "before" twice, show).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from operator import length_hint
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django
from django.conf import settings

from benchmarks.timing import interleaved_rates
from django_snowid.core.clocks import real_monotonic
from django_snowid.core.generator import _EMPTY, SnowflakeGenerator
from django_snowid.core.layout import PRESETS
from django_snowid.exceptions import ClockMovedBackwards, GeneratorForked, TimeBitsExhausted

CHUNKS = 40


class Before(SnowflakeGenerator):
    """The generator with its slow path as it was before the time-travel support."""

    def _enter_current_tick(self) -> None:
        if os.getpid() != self._pid:
            raise GeneratorForked("forked")
        while True:
            now = self._clock()
            if self._tick_start_ns <= now < self._tick_end_ns:
                if length_hint(self._ids) > 0:
                    return
                self._report.tick_full()
                self._wait_until(self._tick_end_ns)
                continue
            tick = self.layout.tick_of_ns(now)
            if tick > self.last_tick:
                self._start_tick(tick)
                return
            behind_ns = self.layout.ns_of_tick(self.last_tick) - now
            if behind_ns > self._tolerance_ns:
                raise ClockMovedBackwards(behind_ms=behind_ns / 1e6, tolerance_ms=5)
            self._wait_until(self.layout.ns_of_tick(self.last_tick + 1))

    def _start_tick(self, tick: int) -> None:
        if self._guard is not None:
            self._guard()
        if tick > self.layout.max_tick or tick < 0:
            raise TimeBitsExhausted("outside the time bits")
        step = self.layout.id_step
        first = self.layout.base(tick, self.node)
        end = first + self.layout.node_span
        if self._spread_bits and not (
            tick == self.last_tick + 1 and self._ids is not _EMPTY and not length_hint(self._ids)
        ):
            first += self._random_bits(self._spread_bits) * step
        ids = iter(tick_ids := range(first, end, step))
        self._counted = (self.issued(), len(tick_ids), ids)
        self._ids = ids
        self._tick_start_ns = self.layout.ns_of_tick(tick)
        self._tick_end_ns = self.layout.ns_of_tick(tick + 1)
        self.last_tick = tick


class Stepping:
    """A generator of ``kind`` whose clock moves one tick at each call."""

    def __init__(self, kind: type[SnowflakeGenerator]) -> None:
        self.ns = 1_800_000_000_000_000_000
        self.generator = kind(PRESETS["classic"], 5, clock=self.clock)

    def clock(self) -> int:
        return self.ns

    def next_id(self, _: int) -> int:
        self.ns += 1_000_000
        return self.generator.next_id()


def setup() -> None:
    settings.configure(
        INSTALLED_APPS=["django_snowid"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        SNOWID_WORKER_ID_SOURCE="static",
        USE_TZ=True,
    )
    django.setup()


def rates(
    calls: list[Callable[[int], object]],
    n: int,
    repeat: int,
    contexts: list[Callable[[], AbstractContextManager[object]]] | None = None,
) -> list[float]:
    """The median over ``repeat`` runs of each call's rate, in interleaved chunks."""
    chunk = max(n // CHUNKS, 1)
    runs = [interleaved_rates(calls, n, chunk, contexts) for _ in range(repeat)]
    return [statistics.median(run[i] for run in runs) for i in range(len(calls))]


def rate_in(
    context: Callable[[], AbstractContextManager[object]],
    call: Callable[[int], object],
    n: int,
    repeat: int,
) -> float:
    """The median rate of ``call`` run ``n`` times inside ``context()`` (entered untimed),
    timed on the host's monotonic clock (freezegun stops ``time.perf_counter()``)."""
    runs = []
    for _ in range(repeat):
        with context():
            began = real_monotonic()
            for i in range(n):
                call(i)
            runs.append(n / (real_monotonic() - began))
    return statistics.median(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=4_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n, repeat = args.calls, args.repeat

    setup()
    import time_machine
    from django.test.utils import setup_test_environment
    from freezegun import freeze_time

    from django_snowid import next_id as public_next_id  # bound once, as projects import it
    from django_snowid.ids import issuer

    plain = issuer.get_generator()
    setup_test_environment()
    issuer.reset()
    following = issuer.get_generator()
    before, again = Before(plain.layout, 1), Before(plain.layout, 2)
    kinds = (type(plain).__name__, type(following).__name__)

    @contextmanager
    def installed(generator: SnowflakeGenerator) -> Iterator[None]:
        """``generator`` as the process's generator of the default layout."""
        issuer._generators["default"] = generator
        yield

    def next_id(_: int) -> object:
        return public_next_id()

    generators = (before, again, plain, following)
    single = rates(
        [next_id] * len(generators), n, repeat, [partial(installed, g) for g in generators]
    )
    bulk = rates(
        [
            lambda i: before.next_ids(1000),
            lambda i: again.next_ids(1000),
            lambda i: plain.next_ids(1000),
            lambda i: following.next_ids(1000),
        ],
        max(n // 1000, CHUNKS),
        repeat,
    )
    bulk = [rate * 1000 for rate in bulk]
    # Every call in a tick of its own: the slow path alone, where the two differ.
    stepping = [Stepping(g) for g in (Before, SnowflakeGenerator)]
    ticks = rates([s.next_id for s in stepping], max(n // 20, CHUNKS), repeat)
    issuer._generators["default"] = following
    moved = [
        rate_in(lambda: freeze_time("2031-07-01 08:30"), next_id, n, repeat),
        rate_in(lambda: time_machine.travel("2021-03-14 15:09", tick=False), next_id, n, repeat),
    ]

    print(f"generators: outside tests {kinds[0]}, in a test process {kinds[1]}")
    print(f"{'what':<52} {'next_id(), ids/s':>17} {'next_ids(1000)':>15} {'ratio':>6}")
    print("-" * 94)
    labels = (
        "before (the copy of the old slow path)",
        "before, a second time (the noise)",
        "django_snowid.next_id(), outside tests",
        "django_snowid.next_id(), test process, clock not moved",
    )
    for label, one, many in zip(labels, single, bulk, strict=True):
        print(f"{label:<52} {one:>17,.0f} {many:>15,.0f} {one / single[0]:>5.3f}x")
    for label, one in zip(
        ("test process, freezegun freeze_time()", "test process, time-machine tick=False"),
        moved,
        strict=True,
    ):
        print(f"{label:<52} {one:>17,.0f} {'':>15} {one / single[0]:>5.3f}x")
    outside = single[2] / single[0]
    print()
    print(
        f"entering a tick (a clock that moves a tick each call): before {1e9 / ticks[0]:,.0f} ns, "
        f"now {1e9 / ticks[1]:,.0f} ns ({ticks[1] / ticks[0]:.3f}x); a tick holds 4,096 ids"
    )
    print(
        f"[{'PASS' if outside >= 0.97 else 'MISS'}] next_id() outside tests within 3% of "
        f"before: {outside:.3f}x (noise: {single[1] / single[0]:.3f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
