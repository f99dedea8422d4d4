"""Id generation speed, next to baselines measured in the same run.

    python benchmarks/bench_ids.py [--seconds 1.0] [--repeat 3]

Every figure is the median of ``--repeat`` runs, each sustained for ``--seconds``.
These machines are noisy: read the ratios, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.timing import interleaved_rates
from django_snowid.core.generator import SnowflakeGenerator
from django_snowid.core.layout import PRESETS, Layout, NodePart

CLASSIC = PRESETS["classic"]
TWELVE_BIT_LIMIT = 4_096_000
CHUNK = 1000


class ClassicLockedSnowflake:
    """The seeds' nextId(): lock, read the clock, same-ms sequence, spin on overflow."""

    def __init__(self, worker: int) -> None:
        self.lock = threading.Lock()
        self.worker = worker
        self.epoch_ms = CLASSIC.epoch_ns // 1_000_000
        self.last = -1
        self.sequence = 0

    def next_id(self) -> int:
        with self.lock:
            now = time.time_ns() // 1_000_000 - self.epoch_ms
            if now < self.last:
                raise RuntimeError("clock moved backwards")
            if now == self.last:
                self.sequence = (self.sequence + 1) & 4095
                if self.sequence == 0:
                    while now <= self.last:
                        now = time.time_ns() // 1_000_000 - self.epoch_ms
            else:
                self.sequence = 0
            self.last = now
            return (now << 22) | (self.worker << 12) | self.sequence


def rate_single(call: Callable[[], object], seconds: float) -> float:
    """Calls per second of ``call``, sustained for ``seconds``."""
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(CHUNK):
            call()
        count += CHUNK
        now = time.perf_counter()
        if now >= deadline:
            return count / (now - start)


def rate_threads(call: Callable[[], object], seconds: float, threads: int = 4) -> float:
    """Aggregate calls per second of ``threads`` threads calling ``call`` at once."""
    counts = [0] * threads
    barrier = threading.Barrier(threads + 1)
    stop = threading.Event()

    def run(index: int) -> None:
        barrier.wait()
        n = 0
        while not stop.is_set():
            for _ in range(CHUNK):
                call()
            n += CHUNK
        counts[index] = n

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    barrier.wait()
    start = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join()
    return sum(counts) / (time.perf_counter() - start)


def rate_bulk(next_ids: Callable[[int], list[int]], seconds: float, batch: int = 1000) -> float:
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        count += len(next_ids(batch))
        now = time.perf_counter()
        if now >= deadline:
            return count / (now - start)


def max_age_ms(generator: SnowflakeGenerator, seconds: float) -> float:
    """The largest gap between an id's time part and the moment it was handed out."""
    worst = 0
    deadline = time.perf_counter() + seconds
    shift, epoch_ns, unit_ns = CLASSIC.time_shift, CLASSIC.epoch_ns, CLASSIC.unit_ns
    while time.perf_counter() < deadline:
        for _ in range(CHUNK):
            value = generator.next_id()
        age = time.time_ns() - (epoch_ns + (value >> shift) * unit_ns)
        worst = max(worst, age)
    return worst / 1e6


def median(measure: Callable[[], float], repeat: int) -> float:
    return statistics.median(measure() for _ in range(repeat))


def spread_against_flat(
    layout: Layout, call: Callable[[SnowflakeGenerator], Callable[[int], object]], n: int
) -> tuple[float, float]:
    """Calls a second of a generator with the layout's spread and of one with spread_bits 0
    (each tick's sequence from 0, as before spread low bits), ``n`` calls each, in
    interleaved chunks (``benchmarks.timing.interleaved_rates``: they share the drift)."""
    spread = SnowflakeGenerator(layout, 2)
    flat = SnowflakeGenerator(replace(layout, spread_bits=0), 3)
    rates = interleaved_rates([call(spread), call(flat)], n, chunk=max(n // 50, 1))
    return rates[0], rates[1]


class StepClock:
    """A clock that moves only when told to (or when the generator waits)."""

    def __init__(self) -> None:
        self.ns = CLASSIC.epoch_ns + 10**15

    def __call__(self) -> int:
        return self.ns

    def sleep(self, seconds: float) -> None:
        self.ns += max(int(seconds * 1e9), 1_000)


def first_tick_ids(layout: Layout, bursts: int = 2_000) -> float:
    """Ids the first tick of a burst holds, on average, when the burst starts after an
    idle tick: what the random offset costs (a tick after a full one starts at 0)."""
    clock = StepClock()
    generator = SnowflakeGenerator(layout, 1, clock=clock, sleep=clock.sleep)
    full, shift = layout.max_sequence + 1, layout.time_shift
    held = 0
    for _ in range(bursts):
        clock.ns += 2 * layout.unit_ns  # idle
        ids = generator.next_ids(full)  # more than the first tick holds
        first = ids[0] >> shift
        held += sum(1 for value in ids if value >> shift == first)
    return held / bursts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    s, r = args.seconds, args.repeat

    try:
        from snowflake import SnowflakeGenerator as PypiSnowflake
    except ImportError:  # pragma: no cover
        PypiSnowflake = None
    try:
        import uuid6
    except ImportError:  # pragma: no cover
        uuid6 = None

    classic = ClassicLockedSnowflake(1)
    ours = SnowflakeGenerator(CLASSIC, 1)
    rows: list[tuple[str, float]] = []

    def measure(label: str, value: float) -> float:
        rows.append((label, value))
        print(f"  measured {label}: {value:,.0f}/s", file=sys.stderr)
        return value

    base = measure(
        "classic locked nextId(), 1 thread", median(lambda: rate_single(classic.next_id, s), r)
    )
    if PypiSnowflake is not None:
        pypi = PypiSnowflake(42)
        measure(
            "snowflake-id next(gen) (PyPI, unlocked)",
            median(lambda: rate_single(pypi.__next__, s), r),
        )
    measure("uuid.uuid4()", median(lambda: rate_single(uuid.uuid4, s), r))
    if uuid6 is not None:
        measure("uuid6.uuid7()", median(lambda: rate_single(uuid6.uuid7, s), r))
    single = measure(
        "django-snowid next_id(), 1 thread", median(lambda: rate_single(ours.next_id, s), r)
    )
    base4 = measure(
        "classic locked nextId(), 4 threads", median(lambda: rate_threads(classic.next_id, s), r)
    )
    ours4 = measure(
        "django-snowid next_id(), 4 threads", median(lambda: rate_threads(ours.next_id, s), r)
    )
    # The same path with a sequence that never runs out within a millisecond: the raw cost
    # of next_id() when the 12-bit limit is not what stops it.
    wide = SnowflakeGenerator(Layout(41, (NodePart("worker", 2),), 20), 1)
    measure(
        "django-snowid next_id(), 20-bit sequence", median(lambda: rate_single(wide.next_id, s), r)
    )
    bulk = measure(
        "django-snowid next_ids(1000), per id", median(lambda: rate_bulk(ours.next_ids, s), r)
    )
    age = max_age_ms(ours, s)

    # Spread low bits: each tick's sequence starts at a random offset below 2**4, drawn
    # when the tick is entered. Against spread_bits 0 (each tick from 0), same run.
    js53 = PRESETS["js53"]
    wide20 = Layout(41, (NodePart("worker", 2),), 20)
    spread_rows = [
        (
            label,
            *(
                rate * per_call
                for rate in spread_against_flat(layout, call, max(int(calls * s), 1))
            ),
        )
        for label, layout, call, calls, per_call in (
            ("next_id(), classic", CLASSIC, lambda g: lambda i: g.next_id(), 2_000_000, 1),
            (
                "next_ids(1000), classic, per id",
                CLASSIC,
                lambda g: lambda i: g.next_ids(1000),
                2_000,
                1000,
            ),
            ("next_id(), 20-bit sequence", wide20, lambda g: lambda i: g.next_id(), 2_000_000, 1),
            ("next_id(), js53 (128 a ms)", js53, lambda g: lambda i: g.next_id(), 120_000, 1),
            ("next_ids(1000), js53, per id", js53, lambda g: lambda i: g.next_ids(1000), 120, 1000),
        )
    ]
    first_ticks = {name: first_tick_ids(PRESETS[name]) for name in ("classic", "js53")}

    print()
    print(f"{'what':<44} {'ids/s':>12} {'x classic':>10}")
    print("-" * 68)
    for label, value in rows:
        ref = base4 if "4 threads" in label else base
        print(f"{label:<44} {value:>12,.0f} {value / ref:>9.2f}x")
    print(f"{'12-bit sequence limit, one worker':<44} {TWELVE_BIT_LIMIT:>12,}")
    print(f"largest age of an id at hand-out: {age:.3f} ms")
    print()
    print("Spread low bits (spread_bits 4) against spread_bits 0, interleaved chunks:")
    print(f"{'what':<36} {'spread, ids/s':>14} {'spread 0, ids/s':>16} {'ratio':>7}")
    print("-" * 76)
    for label, spread, flat in spread_rows:
        print(f"{label:<36} {spread:>14,.0f} {flat:>16,.0f} {spread / flat:>6.3f}x")
    for name, held in first_ticks.items():
        full = PRESETS[name].max_sequence + 1
        print(
            f"first tick of a burst after an idle tick, {name}: {held:,.1f} of {full:,} ids "
            f"({(full - held) / full:.2%} fewer; the ticks after a full one hold all {full:,})"
        )
    print()
    targets = [
        ("next_id() 1 thread >= 3,000,000/s", single >= 3_000_000, f"{single:,.0f}/s"),
        ("next_id() 1 thread >= 1.5x classic", single >= 1.5 * base, f"{single / base:.2f}x"),
        (
            "next_id() 4 threads >= 1.5x classic 4 threads",
            ours4 >= 1.5 * base4,
            f"{ours4 / base4:.2f}x",
        ),
        (
            "next_ids() >= 3,900,000/s (95% of 12-bit limit)",
            bulk >= 3_900_000,
            f"{bulk:,.0f}/s = {bulk / TWELVE_BIT_LIMIT:.1%}",
        ),
        ("ids never stale (age at hand-out < 5 ms)", age < 5, f"{age:.3f} ms"),
    ]
    for label, ok, figure in targets:
        print(f"[{'PASS' if ok else 'MISS'}] {label:<52} {figure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
