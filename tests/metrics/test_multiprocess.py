"""What a process writes for prometheus_client's multiprocess mode (the flusher), read
here as a scrape reads it, from a directory of the test's own: issuing writes nothing, a
flush writes what rose since the previous one, a forked child writes only what it counted
itself, into a file of its own.

tests/metrics/test_gunicorn.py runs the real thing: the files of several gunicorn workers.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings
from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector

import django_snowid
from django_snowid import metrics
from django_snowid.metrics import multiprocess
from django_snowid.metrics.multiprocess import FILL_WINDOW_S, CounterFile, Flusher
from django_snowid.orders.issuer import get_issuer
from django_snowid.sequences import next_value, next_values
from django_snowid.settings_layouts import get_layout
from tests.support import in_child
from tests.testapp.models import ShopOrder


class Seconds:
    """A monotonic clock that moves when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def scraped(directory: Path, registry: CollectorRegistry | None = None) -> Any:
    """A reader of a sample as a scrape shows it: the counters summed from the files of
    ``directory`` by prometheus_client's collector, the rest from ``registry`` (0 for a
    sample not written yet)."""
    files = CollectorRegistry()
    MultiProcessCollector(files, path=str(directory))

    def value(name: str, **labels: str) -> float:
        found = files.get_sample_value(name, labels)
        if found is None and registry is not None:
            found = registry.get_sample_value(name, labels)
        return found or 0.0

    return value


@pytest.fixture
def written(tmp_path):
    """A flusher writing into a directory of the test's own (its gauges and latencies into
    a registry of the test's own), and a reader of what it wrote."""
    registry = CollectorRegistry()
    clock = Seconds()
    flusher = Flusher(registry, directory=str(tmp_path), clock=clock)
    flusher.flush()  # what this process counted before the test
    return flusher, scraped(tmp_path, registry), clock


@pytest.mark.django_db
@override_settings(
    SNOWID_WORKER_ID_SOURCE="static",
    SNOWID_WORKER_ID=3,
    SNOWID_METRICS=True,
    SNOWID_SEQUENCES={"invoice": {}},
)
def test_issuing_writes_nothing_until_a_flush(written):
    flusher, value, _ = written
    ids = value("snowid_ids_issued_total", layout="default", store="static")
    values = value("snowid_sequence_values_issued_total", sequence="invoice", store="database")
    renewals = value("snowid_lease_renew_seconds_count", store="redis")
    django_snowid.next_ids(7)
    next_value("invoice")
    next_values("invoice", 3)
    metrics.observe("redis", 0.004)
    # The calls counted plain integers: prometheus_client was not called.
    assert value("snowid_ids_issued_total", layout="default", store="static") == ids
    assert (
        value("snowid_sequence_values_issued_total", sequence="invoice", store="database") == values
    )
    assert value("snowid_lease_renew_seconds_count", store="redis") == renewals
    flusher.flush()
    assert value("snowid_ids_issued_total", layout="default", store="static") == ids + 7
    assert (
        value("snowid_sequence_values_issued_total", sequence="invoice", store="database")
        == values + 4
    )
    assert value("snowid_lease_renew_seconds_count", store="redis") == renewals + 1
    flusher.flush()  # nothing new: nothing written
    assert value("snowid_ids_issued_total", layout="default", store="static") == ids + 7
    assert value("snowid_lease_renew_seconds_count", store="redis") == renewals + 1


@pytest.mark.django_db
@override_settings(SNOWID_METRICS=True, SNOWID_ORDER_BACKEND="database")
def test_the_gauges_of_a_process(written):
    flusher, value, clock = written
    field = ShopOrder._meta.get_field("number")
    issuer = get_issuer(field.stream, field.format)
    for user in range(3):
        issuer.next_number(user)
    fill = 3 / field.format.max_sequence
    layout = get_layout()
    before = layout.exhausted_at.timestamp() - time.time()
    flusher.flush(gauges=True)
    after = layout.exhausted_at.timestamp() - time.time()
    assert after <= value("snowid_time_bits_remaining_seconds", layout="default") <= before
    assert value("snowid_order_busiest_second_fill_ratio") == fill
    # The largest fill of the last minute, though the issuer's period started again.
    clock.now += FILL_WINDOW_S - 1
    flusher.flush(gauges=True)
    assert value("snowid_order_busiest_second_fill_ratio") == fill
    clock.now += 2
    flusher.flush(gauges=True)
    assert value("snowid_order_busiest_second_fill_ratio") == 0


@pytest.mark.django_db
@override_settings(SNOWID_METRICS=True, SNOWID_ORDER_BACKEND="database")
def test_what_comes_after_a_flush_reaches_the_next_one_once(written):
    """A flush reads what it planned at the previous one: a stream first used after it,
    an event counted after it, issuers a settings change forgot (their counts kept) each
    reach the next flush, once."""
    flusher, value, _ = written
    field = ShopOrder._meta.get_field("number")
    labels = {"stream": field.stream, "store": "database"}
    issued = value("snowid_order_numbers_issued_total", **labels)
    waits = value("snowid_waits_total", part="orders", cause="second_full")
    flusher.flush()  # the settings changed: no issuer of the stream yet
    issuer = get_issuer(field.stream, field.format)
    issuer.next_number(1)
    issuer.next_number(2)
    flusher.flush()
    assert value("snowid_order_numbers_issued_total", **labels) == issued + 2
    metrics.count("waits", "orders", "second_full")
    flusher.flush()
    assert value("snowid_waits_total", part="orders", cause="second_full") == waits + 1
    with override_settings(SNOWID_ORDER_MAX_WAIT_MS=500):  # forgets the issuers
        flusher.flush()
        assert value("snowid_order_numbers_issued_total", **labels) == issued + 2
        get_issuer(field.stream, field.format).next_number(3)
        flusher.flush()
        assert value("snowid_order_numbers_issued_total", **labels) == issued + 3


@pytest.mark.django_db(transaction=True)
@override_settings(SNOWID_METRICS=True, SNOWID_SEQUENCES={"invoice": {}})
def test_a_forked_child_writes_only_what_it_counted(written, tmp_path):
    """Its parent's counts are the parent's: a child (a gunicorn worker forked after
    --preload, a Celery child) writes from zero into a file of its own."""
    flusher, value, _ = written
    next_values("invoice", 5)
    flusher.flush()
    parent = tmp_path / f"counter_snowid-{os.getpid()}.db"
    parents = parent.read_bytes()

    def child() -> tuple[float, bool, bool]:
        before = value("snowid_sequence_values_issued_total", sequence="invoice", store="database")
        next_values("invoice", 2)
        flusher.flush()
        after = value("snowid_sequence_values_issued_total", sequence="invoice", store="database")
        own = (tmp_path / f"counter_snowid-{os.getpid()}.db").exists()
        return after - before, own, parent.read_bytes() == parents

    # What it counted, in a file of its own; its parent's file as the parent left it.
    assert in_child(child) == "ok:(2.0, True, True)"


@pytest.mark.django_db
def test_a_process_adds_to_what_a_process_with_its_pid_left(tmp_path):
    """A pid used again (a worker recycled long after another had it) continues the counts
    of that file rather than replacing them: a counter never goes down."""
    earlier = CounterFile(str(tmp_path))
    key, _ = earlier.key("waits", ("ids", "clock_behind"))
    earlier.write(key, 40.0)
    metrics.count("waits", "ids", "clock_behind")
    Flusher(CollectorRegistry(), directory=str(tmp_path)).flush()
    counted = metrics.counts()[("waits", ("ids", "clock_behind"))]
    assert scraped(tmp_path)("snowid_waits_total", part="ids", cause="clock_behind") == 40 + counted


def test_after_a_first_flush_a_thread_writes_the_counts_unasked(monkeypatch, tmp_path):
    """Work outside requests (heartbeats, jobs) reaches the files without being asked, once
    the process flushed once (a request's end, or flush())."""
    monkeypatch.setattr(multiprocess, "FLUSH_EVERY_S", 0.01)
    flusher = Flusher(CollectorRegistry(), directory=str(tmp_path))
    monkeypatch.setattr(multiprocess, "_flusher", [flusher])
    multiprocess.flush()  # what request_finished calls
    value = scraped(tmp_path)
    before = value("snowid_waits_total", part="ids", cause="clock_behind")
    metrics.count("waits", "ids", "clock_behind")
    deadline = time.monotonic() + 30
    try:
        while value("snowid_waits_total", part="ids", cause="clock_behind") != before + 1:
            assert time.monotonic() < deadline, "the thread never wrote the count"
            time.sleep(0.01)
    finally:
        flusher._stop.set()
