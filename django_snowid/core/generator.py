"""The Snowflake generator: a state machine over (last tick, sequence) with an injected
clock, serving each tick's ids from one range iterator (docs: "Performance", "Spread low
bits")."""

from __future__ import annotations

import os
import random
import sysconfig
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from itertools import islice
from operator import length_hint
from typing import Final

from ..exceptions import ClockMovedBackwards, GeneratorForked, TimeBitsExhausted
from .clocks import moved_clock_hint
from .layout import Layout

__all__ = ["FREE_THREADED", "Clock", "Reporter", "SnowflakeGenerator"]

#: Returns nanoseconds since the Unix epoch, like :func:`time.time_ns`.
Clock = Callable[[], int]

#: This interpreter is a free-threaded build (no GIL, even if one is turned on later).
FREE_THREADED: Final = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))

_EMPTY: Final[Iterator[int]] = iter(())
# Waits shorter than this are spun; longer ones sleep, minus this margin.
_SPIN_NS: Final = 1_000_000


class Reporter:
    """Told of a generator's waits and refusals, off the fast path; silent as it is."""

    def tick_full(self) -> None:
        """Every id of the current tick was taken: the generator waits for the next."""

    def clock_wait(self, behind_ms: float) -> None:
        """The clock is behind the last tick by at most the tolerance: waited out."""

    def clock_refused(self, behind_ms: float) -> None:
        """The clock is behind the last tick by more than the tolerance."""

    def time_bits_refused(self) -> None:
        """The clock is before the epoch or past the time bits."""


_SILENT: Final = Reporter()

_live_generators: weakref.WeakSet[SnowflakeGenerator] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    # Empty every buffer: the next call takes the slow path, which sees the new pid.
    for generator in list(_live_generators):
        generator._drop_buffer()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class SnowflakeGenerator:
    """Issues strictly increasing ids for one worker (one node value) of one layout; one
    per process and worker id, shared between threads (a forked child's use raises
    :class:`GeneratorForked`).

    ``clock`` returns nanoseconds since the Unix epoch; ``sleep`` takes seconds.
    A clock behind the last tick by at most ``backwards_tolerance_ms`` is waited out;
    further behind, :class:`ClockMovedBackwards` is raised. Ticks up to ``last_tick``
    were used by a previous holder of the worker id. ``guard`` runs before each new tick
    and raises to stop the generator. ``random_bits(k)`` draws each tick's offset.
    """

    def __init__(
        self,
        layout: Layout,
        worker: int | Mapping[str, int] = 0,
        *,
        clock: Clock = time.time_ns,
        sleep: Callable[[float], None] = time.sleep,
        backwards_tolerance_ms: float = 5.0,
        last_tick: int = -1,
        guard: Callable[[], None] | None = None,
        random_bits: Callable[[int], int] = random.getrandbits,
        report: Reporter = _SILENT,
    ) -> None:
        self.layout = layout
        self.node = layout.node_value(worker)
        self.backwards_tolerance_ms = backwards_tolerance_ms
        self._clock = clock
        self._sleep = sleep
        self._tolerance_ns = int(backwards_tolerance_ms * 1_000_000)
        self._spread_bits = layout.spread_bits or 0
        self._random_bits = random_bits
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._guard = guard
        self._report = report
        # (ids of earlier ticks, the current iterator's size, that iterator), replaced whole.
        self._counted: tuple[int, int, Iterator[int]] = (0, 0, _EMPTY)
        self.last_tick = last_tick
        self._ids = _EMPTY
        self._tick_start_ns = 0
        self._tick_end_ns = 0  # the fast path is closed until the first tick is entered
        _live_generators.add(self)

    def _next_id_fast(self) -> int:
        """Return the next id. Thread-safe; strictly greater than every id before it."""
        now = self._clock()
        if self._tick_start_ns <= now < self._tick_end_ns:
            try:
                return next(self._ids)
            except StopIteration:
                pass
        return self._next_id_locked()

    def _next_id_locked(self) -> int:
        """Return the next id. Thread-safe; strictly greater than every id before it."""
        with self._lock:
            while True:
                self._enter_current_tick()
                try:
                    return next(self._ids)
                except StopIteration:
                    continue  # another thread emptied the tick meanwhile

    next_id = _next_id_locked if FREE_THREADED else _next_id_fast
    __next__ = next_id

    def __iter__(self) -> SnowflakeGenerator:
        return self

    def next_ids(self, count: int) -> list[int]:
        """Return ``count`` increasing ids at once (the path for ``bulk_create``)."""
        if count < 0:
            raise ValueError(f"count must be >= 0, not {count}.")
        ids: list[int] = []
        with self._lock:
            while len(ids) < count:
                self._enter_current_tick()
                ids.extend(islice(self._ids, count - len(ids)))
        return ids

    def issued(self) -> int:
        """How many ids this generator handed out (read by metrics at scrape time; takes
        no lock, so the generator's ``guard`` may call it)."""
        before, size, ids = self._counted
        return before + size - length_hint(ids)

    def last_tick_entered(self) -> int:
        """The last tick this generator entered, once no thread is entering one (a thread
        whose ``guard`` passed has recorded its tick). Not to be called from ``guard``."""
        with self._lock:
            return self.last_tick

    def _enter_current_tick(self) -> None:
        """Make ``self._ids`` serve the current tick, waiting or raising as needed (called
        with the lock held)."""
        self._refuse_forked()
        while True:
            now = self._clock()
            if self._tick_start_ns <= now < self._tick_end_ns:
                if length_hint(self._ids) > 0:
                    return
                self._report.tick_full()
                self._wait_until(self._tick_end_ns)  # sequence used up: next tick
                continue
            tick = self.layout.tick_of_ns(now)
            if tick > self.last_tick:
                self._start_tick(tick)
                return
            # A used tick: ours before the clock stepped back, or a previous holder's.
            last_start_ns = self.layout.ns_of_tick(self.last_tick)
            behind_ns = last_start_ns - now
            if behind_ns > self._tolerance_ns:
                self._report.clock_refused(behind_ns / 1_000_000)
                raise ClockMovedBackwards(
                    behind_ms=behind_ns / 1_000_000,
                    tolerance_ms=self.backwards_tolerance_ms,
                    hint=moved_clock_hint(),
                )
            self._report.clock_wait(max(behind_ns, 0) / 1_000_000)
            self._wait_until(self.layout.ns_of_tick(self.last_tick + 1))

    def _refuse_forked(self) -> None:
        if os.getpid() != self._pid:
            raise GeneratorForked(
                f"This Snowflake generator (worker node {self.node}) was created in process "
                f"{self._pid} and used in its forked child {os.getpid()}; the child would repeat "
                "the parent's ids. Create generators after the fork, each with its own worker id."
            )

    def _start_tick(self, tick: int) -> None:
        # Right after a tick whose ids were all taken: full load, start at 0.
        after_full = (
            tick == self.last_tick + 1 and self._ids is not _EMPTY and not length_hint(self._ids)
        )
        self._serve(self._open_tick(tick, after_full=after_full), tick)
        self.last_tick = tick

    def _open_tick(self, tick: int, *, after_full: bool) -> Iterator[int]:
        """The ids of ``tick`` (guarded), from a random offset unless ``after_full``."""
        if self._guard is not None:
            self._guard()
        if tick > self.layout.max_tick or tick < 0:
            self._report.time_bits_refused()
        if tick > self.layout.max_tick:
            raise TimeBitsExhausted(
                f"The time bits of layout {self.layout.name!r} ran out at "
                f"{self.layout.exhausted_at.isoformat()}; no id can be issued. Move to a "
                "layout with a later epoch or more time bits."
            )
        if tick < 0:
            raise TimeBitsExhausted(
                f"The clock is before the epoch {self.layout.epoch.isoformat()} of layout "
                f"{self.layout.name!r}; no id can be issued."
            )
        step = self.layout.id_step  # ids issued here have shard 0: the caller ORs its shard in
        first = self.layout.base(tick, self.node)
        end = first + self.layout.node_span
        if self._spread_bits and not after_full:
            first += self._random_bits(self._spread_bits) * step
        return iter(range(first, end, step))

    def _serve(self, ids: Iterator[int], tick: int) -> None:
        """Serve ``ids`` while the clock reads ``tick``."""
        # Publish the iterator before the bounds: a thread of the fast path that reads
        # the old bounds with the new iterator still gets a fresh, unique id.
        self._counted = (self.issued(), length_hint(ids), ids)
        self._ids = ids
        self._tick_start_ns = self.layout.ns_of_tick(tick)
        self._tick_end_ns = self.layout.ns_of_tick(tick + 1)

    def _wait_until(self, target_ns: int) -> None:
        while True:
            remaining = target_ns - self._clock()
            if remaining <= 0:
                return
            self._sleep((remaining - _SPIN_NS) / 1e9 if remaining > 2 * _SPIN_NS else 0)

    def _drop_buffer(self) -> None:
        self._counted = (self.issued(), 0, _EMPTY)
        self._ids = _EMPTY
        self._tick_end_ns = 0
        self._tick_start_ns = 0
