"""prometheus_client's multiprocess mode: :func:`flush` writes this process's counts into
the multiprocess directory, at each request's end, every :data:`FLUSH_EVERY_S` and at exit.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

from django.core.signals import request_finished
from prometheus_client import Gauge
from prometheus_client import Histogram as PrometheusHistogram
from prometheus_client.mmap_dict import MmapedDict, mmap_key
from prometheus_client.registry import CollectorRegistry

from .. import metrics
from ..checks import configured_layouts
from .collector import DESCRIPTIONS, REMAINING_HELP, RENEW_HELP

__all__ = ["FILL_WINDOW_S", "FLUSH_EVERY_S", "Flusher", "flush", "install"]

logger = logging.getLogger(__name__)

#: How often a process that flushed once writes its counts again, unasked.
FLUSH_EVERY_S = 5.0
#: The busiest-second gauge of a process: the largest fill it saw in this many seconds.
FILL_WINDOW_S = 60.0


class CounterFile:
    """This process's counters in ``counter_snowid-<pid>.db``, for ``MultiProcessCollector``."""

    def __init__(self, directory: str) -> None:
        self.path = os.path.join(directory, f"counter_snowid-{os.getpid()}.db")
        self._values = MmapedDict(self.path)

    def key(self, name: str, labels: tuple[str, ...]) -> tuple[str, float]:
        """The file's key of a counter, and the value a process with this pid left there."""
        key = mmap_key(
            f"snowid_{name}",
            f"snowid_{name}_total",
            list(metrics.COUNTERS[name]),
            list(labels),
            DESCRIPTIONS[name],
        )
        left, _ = self._values.read_value(key)
        return key, left

    def write(self, key: str, value: float) -> None:
        self._values.write_value(key, value, 0.0)


class _Slot:
    """A flusher's counter: its counts when planned, reader, what was written, and where."""

    __slots__ = ("base", "filed", "key", "read", "stored", "written")

    def __init__(
        self,
        key: tuple[str, tuple[str, ...]],
        base: int,
        read: metrics.Reader,
        before: _Slot | None,
    ) -> None:
        self.key, self.base, self.read = key, base, read
        self.written: int = 0 if before is None else before.written
        self.stored: str = "" if before is None else before.stored
        self.filed: float = 0.0 if before is None else before.filed


class Flusher:
    """Writes this process's counts since the previous flush into its :class:`CounterFile`,
    its gauges and latencies into prometheus_client's metrics."""

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        *,
        directory: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self.directory = directory or metrics.multiprocess_dir() or ""
        if not self.directory:
            raise ValueError("No directory to write in: PROMETHEUS_MULTIPROC_DIR is not set.")
        self._file: CounterFile | None = None  # opened by the first write of a process
        self._lock = threading.Lock()
        self._fills: deque[tuple[float, float]] = deque()
        self._renewals = PrometheusHistogram(
            "snowid_lease_renew_seconds",
            RENEW_HELP,
            ["store"],
            buckets=metrics.LATENCY_BUCKETS,
            registry=registry,
        )
        self._fill = Gauge(
            "snowid_order_busiest_second_fill_ratio",
            "The largest fraction of a second's cap of numbers any order stream used in "
            f"the last {FILL_WINDOW_S:g} s",
            registry=registry,
            multiprocess_mode="livemax",
        )
        self._remaining = Gauge(
            "snowid_time_bits_remaining_seconds",
            REMAINING_HELP,
            ["layout"],
            registry=registry,
            multiprocess_mode="livemin",
        )
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._generation = -1  # never a generation: the first flush plans
        self._slots: list[_Slot] = []
        self._live: list[_Slot] = []  # the slots read at each flush
        metrics.keep_observations()
        _flushers.add(self)

    def flush(self, *, gauges: bool = False) -> None:
        with self._lock:
            if self._generation != metrics.generation():
                self._plan()
            for slot in self._live:
                value = slot.base + slot.read()
                if value != slot.written:
                    self._write(slot, value)
            for store, seconds in metrics.take_observations():
                self._renewals.labels(store).observe(seconds)
            if gauges:
                self._set_gauges()

    def _plan(self) -> None:
        """Per counter, the counts so far and one reader of what objects count themselves."""
        self._generation = metrics.generation()  # first: a change meanwhile plans again
        counts = metrics.counts()
        readers: dict[tuple[str, tuple[str, ...]], list[metrics.Reader]] = {}
        for name, labels, read in metrics.readers():
            readers.setdefault((name, labels), []).append(read)
        before = {slot.key: slot for slot in self._slots}
        self._slots = [
            _Slot(key, counts.get(key, 0), _one_reader(readers.get(key, [])), before.get(key))
            for key in counts.keys() | readers.keys()
        ]
        self._live = [slot for slot in self._slots if slot.read is not _nothing]
        for slot in self._slots:
            if slot.read is _nothing and slot.base != slot.written:
                self._write(slot, slot.base)

    def _write(self, slot: _Slot, value: int) -> None:
        if value > slot.written:  # below: a count that started again (never here)
            if self._file is None:
                self._file = CounterFile(self.directory)
            if not slot.stored:
                slot.stored, slot.filed = self._file.key(*slot.key)
            slot.filed += value - slot.written
            self._file.write(slot.stored, slot.filed)
        slot.written = value

    def _set_gauges(self) -> None:
        now = self.clock()
        fill = metrics.busiest_fill()
        if fill:
            self._fills.append((now, fill))
        while self._fills and self._fills[0][0] < now - FILL_WINDOW_S:
            self._fills.popleft()
        self._fill.set(max((fraction for _, fraction in self._fills), default=0.0))
        unix = time.time()
        for layout in configured_layouts()[0]:
            self._remaining.labels(layout.name).set(layout.exhausted_at.timestamp() - unix)

    def start(self) -> None:
        """Flush every :data:`FLUSH_EVERY_S` from a daemon thread of this process."""
        self._thread = threading.Thread(target=self._run, name="snowid-metrics", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(FLUSH_EVERY_S):
            _flush_safely(self, gauges=True)

    def after_fork_in_child(self) -> None:
        """A child counts from zero into a file of its own, with its own thread and locks."""
        self._lock = threading.Lock()
        self._file = None
        for slot in self._slots:
            slot.written, slot.stored, slot.filed = 0, "", 0.0
        self._generation = -1
        self._fills.clear()
        self._stop = threading.Event()
        self._thread = None


def _nothing() -> int:
    return 0


def _one_reader(readers: list[metrics.Reader]) -> metrics.Reader:
    """One reader of the sum of ``readers`` (0 for none)."""
    if len(readers) == 1:
        return readers[0]
    if not readers:
        return _nothing
    return lambda: sum(read() for read in readers)


_flushers: weakref.WeakSet[Flusher] = weakref.WeakSet()
_flusher: list[Flusher] = []  # the one install() made
_failed: list[int] = []  # the pid of a process that logged a failed flush


def _flush_safely(flusher: Flusher, *, gauges: bool = False) -> None:
    try:
        flusher.flush(gauges=gauges)
    except Exception:
        if os.getpid() not in _failed:  # once a process: the next flush may well fail too
            _failed.append(os.getpid())
            logger.exception(
                "Metrics not written to PROMETHEUS_MULTIPROC_DIR=%r (see check E703); the "
                "counts are kept and written at the next flush that succeeds.",
                metrics.multiprocess_dir(),
            )


def flush(**kwargs: Any) -> None:
    """Write this process's counts into the multiprocess files now, then every
    :data:`FLUSH_EVERY_S` (nothing without the multiprocess mode)."""

    if not _flusher:
        return
    flusher = _flusher[0]
    _flush_safely(flusher)
    if flusher._thread is None:
        flusher.start()


def _exit_flush() -> None:
    if _flusher:
        _flush_safely(_flusher[0])


def _after_fork_in_child() -> None:
    for flusher in list(_flushers):
        flusher.after_fork_in_child()


os.register_at_fork(after_in_child=_after_fork_in_child)


def install() -> Flusher:
    """Write this process's counts into prometheus_client's multiprocess files (once)."""
    if not _flusher:
        _flusher.append(Flusher())
        request_finished.connect(flush, dispatch_uid="snowid-metrics-flush")
        atexit.register(_exit_flush)
    return _flusher[0]
