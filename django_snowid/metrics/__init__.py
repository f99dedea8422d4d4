"""What an operator counts: plain integers, kept here and read at scrape time.

Events off the hot path go through :func:`count` and :func:`observe`; issuers count what
they issue themselves and are read at scrape time (:func:`register`). Labels stay
low-cardinality: never an id or a number.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

__all__ = [
    "LATENCY_BUCKETS",
    "Histogram",
    "Registry",
    "busiest_fill",
    "count",
    "counts",
    "generation",
    "keep_observations",
    "latency",
    "multiprocess_dir",
    "observe",
    "readers",
    "refused",
    "register",
    "reset",
    "take_observations",
    "totals",
]

#: Counter names (without ``snowid_`` and ``_total``) and their label names.
COUNTERS: dict[str, tuple[str, ...]] = {
    "ids_issued": ("layout", "store"),
    "order_numbers_issued": ("stream", "store"),
    "order_numbers_abandoned": ("stream", "store"),
    "order_blocks": ("stream", "store"),
    "order_block_numbers": ("stream", "store"),
    "sequence_values_issued": ("sequence", "store"),
    "refusals": ("part", "cause"),
    "waits": ("part", "cause"),
    "recoveries": ("part", "store"),
    "failover_resyncs": ("part", "store"),
    "leases_acquired": ("store",),
    "leases_lost": ("store",),
}

#: Seconds; a renewal is one round trip to Redis or one UPDATE.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

_lock = threading.Lock()
_counts: defaultdict[tuple[str, tuple[str, ...]], int] = defaultdict(int)

_changes = itertools.count(1)
_generation = 0


def _changed() -> None:
    global _generation  # a value never written before, after the change's data
    _generation = next(_changes)


def generation() -> int:
    """Moves whenever :func:`count` adds or a :class:`Registry` changes."""
    return _generation


def count(name: str, *labels: str, by: int = 1) -> None:
    """Add ``by`` to counter ``name`` (a key of :data:`COUNTERS`) with these label values."""
    with _lock:
        _counts[(name, labels)] += by
    _changed()


K = TypeVar("K")
V = TypeVar("V")


class Registry(dict[K, V]):
    """A dict of objects that count themselves; each change moves :func:`generation`."""

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        _changed()

    def __delitem__(self, key: K) -> None:
        super().__delitem__(key)
        _changed()

    def setdefault(self, key: K, default: Any = None) -> V:
        value = super().setdefault(key, default)
        _changed()
        return value

    def pop(self, key: K, *default: Any) -> Any:
        value = super().pop(key, *default)
        _changed()
        return value

    def popitem(self) -> tuple[K, V]:
        item = super().popitem()
        _changed()
        return item

    def clear(self) -> None:
        super().clear()
        _changed()

    def update(self, *args: Any, **kwargs: Any) -> None:
        super().update(*args, **kwargs)
        _changed()

    def __ior__(self, other: Any) -> Any:  # type: ignore[misc]
        result = super().__ior__(other)
        _changed()
        return result


#: A refusal of a kind (part, cause) is logged at most once in this many seconds.
REFUSAL_LOG_EVERY_S = 10.0
_now = time.monotonic  # tests move it
_logged: dict[tuple[str, str], tuple[float, int]] = {}


def refused(logger: logging.Logger, part: str, cause: str, message: str) -> None:
    """Count a refusal of ``part`` for ``cause`` and log it (rate-limited)."""
    count("refusals", part, cause)
    now = _now()
    with _lock:
        last, unlogged = _logged.get((part, cause), (-REFUSAL_LOG_EVERY_S, 0))
        if now - last < REFUSAL_LOG_EVERY_S:
            _logged[(part, cause)] = (last, unlogged + 1)
            return
        _logged[(part, cause)] = (now, 0)
    more = f" ({unlogged} more refused since the previous line)" if unlogged else ""
    logger.error("Refused: %s%s", message, more)


def counts() -> dict[tuple[str, tuple[str, ...]], int]:
    """A snapshot of every counter, by (name, label values)."""
    with _lock:
        return dict(_counts)


class Histogram:
    """Bucket counts and a sum, as Prometheus wants them (cumulative at read time)."""

    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)  # the last one: above every bound
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.sum += value

    def cumulative(self) -> list[tuple[str, int]]:
        total, rows = 0, []
        for bound, number in zip((*map(str, self.buckets), "+Inf"), self.counts, strict=True):
            total += number
            rows.append((bound, total))
        return rows


_latency: dict[str, Histogram] = {}
#: The renewals not yet written to prometheus_client's multiprocess files (None: not kept).
_unwritten: list[tuple[str, float]] | None = None


def observe(store: str, seconds: float) -> None:
    """One lease renewal in ``store`` took ``seconds``."""
    with _lock:
        histogram = _latency.get(store)
        if histogram is None:
            histogram = _latency[store] = Histogram(LATENCY_BUCKETS)
        histogram.observe(seconds)
        if _unwritten is not None:
            _unwritten.append((store, seconds))


def keep_observations() -> None:
    """Keep each renewal for :func:`take_observations` (the multiprocess mode)."""
    global _unwritten
    with _lock:
        if _unwritten is None:
            _unwritten = []


def take_observations() -> list[tuple[str, float]]:
    """The renewals observed since the previous call, as (store, seconds)."""
    if not _unwritten:  # without the lock: one appended meanwhile comes next time
        return []
    with _lock:
        if not _unwritten:
            return []
        taken = list(_unwritten)
        _unwritten.clear()
        return taken


def multiprocess_dir() -> str | None:
    """``PROMETHEUS_MULTIPROC_DIR`` (or its lower-case name), if set."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or os.environ.get(
        "prometheus_multiproc_dir"  # noqa: SIM112 (prometheus_client still reads it)
    )


def latency() -> dict[str, tuple[list[tuple[str, int]], float]]:
    """Per lease store: cumulative buckets and the sum of the renewal latencies."""
    with _lock:
        return {store: (h.cumulative(), h.sum) for store, h in _latency.items()}


#: Reads a count an object keeps itself (an issuer's, a tally's) when called.
Reader = Callable[[], int]
#: Callables yielding (counter name, label values, reader) of a :class:`Registry`'s objects.
Live = Callable[[], Iterator[tuple[str, tuple[str, ...], Reader]]]
_live: list[Live] = []

#: Callables yielding (stream, fraction of a second's cap used at most since the last read).
Fill = Callable[[], Iterator[tuple[str, float]]]
_fill: list[Fill] = []


def register(*, live: Live | None = None, fill: Fill | None = None) -> None:
    """Register what a module counts itself (see :data:`Live` and :data:`Fill`)."""
    if live is not None:
        _live.append(live)
    if fill is not None:
        _fill.append(fill)
    _changed()


def readers() -> Iterator[tuple[str, tuple[str, ...], Reader]]:
    """(counter name, label values, reader) of every object that counts itself."""
    for source in _live:
        yield from source()


def totals() -> dict[tuple[str, tuple[str, ...]], int]:
    """Every counter: the counts plus what live objects counted themselves."""
    result = counts()
    for name, labels, read in readers():
        result[(name, labels)] = result.get((name, labels), 0) + read()
    return result


def busiest_fill() -> float:
    """The largest fraction of a second's cap any order stream used since the last read."""
    return max((fraction for source in _fill for _, fraction in source()), default=0.0)


def reset() -> None:
    """Forget every count (tests)."""
    with _lock:
        _counts.clear()
        _latency.clear()
        _logged.clear()
        if _unwritten is not None:
            _unwritten.clear()
    _changed()


def _after_fork_in_child() -> None:
    # A child's counters start at zero; the parent may have held the lock while forking.

    global _lock
    _lock = threading.Lock()
    _counts.clear()
    _latency.clear()
    if _unwritten is not None:
        _unwritten.clear()
    _changed()


os.register_at_fork(after_in_child=_after_fork_in_child)
