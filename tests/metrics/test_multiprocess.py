"""What a process writes for prometheus_client's multiprocess mode (the flusher), read
here from a registry of the test's own: issuing writes nothing, a flush writes what rose
since the previous one, a forked child writes only what it counted itself.

tests/metrics/test_gunicorn.py runs the real thing: the files of several gunicorn workers.
"""

from __future__ import annotations

import time

import pytest
from django.test import override_settings
from prometheus_client import CollectorRegistry

import django_snowid
from django_snowid import metrics
from django_snowid.metrics import multiprocess
from django_snowid.metrics.multiprocess import FILL_WINDOW_S, Flusher
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


@pytest.fixture
def written():
    """A flusher writing into a registry of the test's own, and a reader of that registry
    (0 for a sample not written yet)."""
    registry = CollectorRegistry()
    clock = Seconds()
    flusher = Flusher(registry, clock=clock)
    flusher.flush()  # what this process counted before the test

    def value(name: str, **labels: str) -> float:
        return registry.get_sample_value(name, labels) or 0.0

    return flusher, value, clock


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
def test_a_forked_child_writes_only_what_it_counted(written):
    """Its parent's counts are the parent's: a child (a gunicorn worker forked after
    --preload, a Celery child) writes from zero into files of its own."""
    flusher, value, _ = written
    next_values("invoice", 5)
    flusher.flush()

    def child() -> float:
        before = value("snowid_sequence_values_issued_total", sequence="invoice", store="database")
        next_values("invoice", 2)
        flusher.flush()
        after = value("snowid_sequence_values_issued_total", sequence="invoice", store="database")
        return after - before

    assert in_child(child) == "ok:2.0"


def test_after_a_first_flush_a_thread_writes_the_counts_unasked(monkeypatch):
    """Work outside requests (heartbeats, jobs) reaches the files without being asked, once
    the process flushed once (a request's end, or flush())."""
    monkeypatch.setattr(multiprocess, "FLUSH_EVERY_S", 0.01)
    registry = CollectorRegistry()
    flusher = Flusher(registry)
    monkeypatch.setattr(multiprocess, "_flusher", [flusher])
    multiprocess.flush()  # what request_finished calls
    labels = {"part": "ids", "cause": "clock_behind"}
    before = registry.get_sample_value("snowid_waits_total", labels) or 0.0
    metrics.count("waits", "ids", "clock_behind")
    deadline = time.monotonic() + 30
    try:
        while registry.get_sample_value("snowid_waits_total", labels) != before + 1:
            assert time.monotonic() < deadline, "the thread never wrote the count"
            time.sleep(0.01)
    finally:
        flusher._stop.set()
