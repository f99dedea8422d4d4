"""Each metric moves when its event happens: real Redis and databases, injected clocks."""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connections
from django.test import override_settings
from prometheus_client import CollectorRegistry, generate_latest

import django_snowid
from django_snowid import metrics
from django_snowid.core.generator import SnowflakeGenerator
from django_snowid.core.layout import PRESETS, Layout, NodePart, iso_utc
from django_snowid.exceptions import (
    ClockMovedBackwards,
    OrderClockBehind,
    OrderNumberUnavailable,
    OrderSecondFull,
    SequenceUnavailable,
    WorkerIdError,
    WorkerIdUnavailable,
    WorkerLeaseLost,
)
from django_snowid.ids import issuer as id_issuer
from django_snowid.metrics.collector import SnowidCollector
from django_snowid.orders.issuer import get_issuer
from django_snowid.orders.stores import MISSING, get_store
from django_snowid.sequences import next_value, next_values
from django_snowid.workers.leased import lease_generator, lease_of
from tests.support import MS, Clock, FakeClock, set_order_state
from tests.testapp.models import Customer, Invoice, ShopOrder, TinyOrder

CLASSIC = PRESETS["classic"]


@pytest.fixture(autouse=True)
def _log_every_refusal():
    """Each test sees its refusals' lines (one of a kind is logged every 10 s)."""
    metrics._logged.clear()
    yield
    metrics._logged.clear()


def sample(name: str, **labels: str) -> float:
    """The value of one sample as a scrape would read it now (0 when absent)."""
    registry = CollectorRegistry()
    registry.register(SnowidCollector())
    value = registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


# ------------------------------------------------------------------- ids


def test_a_generator_counts_its_ids_off_the_fast_path(clock):
    generator = SnowflakeGenerator(CLASSIC, 1, clock=clock, sleep=clock.sleep)
    assert generator.issued() == 0
    for _ in range(5):
        generator.next_id()
    clock.advance_ms(3)
    generator.next_ids(4000)  # more than a tick holds: spans ticks
    generator.next_id()
    assert generator.issued() == 5 + 4000 + 1


@override_settings(SNOWID_WORKER_ID_SOURCE="static", SNOWID_WORKER_ID=3)
def test_ids_issued_counter_moves_and_survives_a_dropped_generator():
    before = sample("snowid_ids_issued_total", layout="default", store="static")
    for _ in range(7):
        django_snowid.next_id()
    assert sample("snowid_ids_issued_total", layout="default", store="static") == before + 7
    id_issuer.reset()  # the generator is forgotten: its ids stay counted
    assert sample("snowid_ids_issued_total", layout="default", store="static") == before + 7
    django_snowid.next_ids(5)
    assert sample("snowid_ids_issued_total", layout="default", store="static") == before + 12


def test_clock_waits_and_refusals_are_counted_and_logged(clock, caplog):
    report = id_issuer._Reporter("default")
    generator = SnowflakeGenerator(
        CLASSIC, 1, clock=clock, sleep=clock.sleep, backwards_tolerance_ms=5, report=report
    )
    generator.next_id()
    waits = sample("snowid_waits_total", part="ids", cause="clock_behind")
    refusals = sample("snowid_refusals_total", part="ids", cause="clock_behind")
    with caplog.at_level(logging.INFO, logger="django_snowid"):
        clock.advance_ms(-2)  # within the tolerance: waited out
        generator.next_id()
        assert sample("snowid_waits_total", part="ids", cause="clock_behind") == waits + 1
        clock.advance_ms(-100)
        with pytest.raises(ClockMovedBackwards):
            generator.next_id()
    assert sample("snowid_refusals_total", part="ids", cause="clock_behind") == refusals + 1
    levels = [(r.name, r.levelname) for r in caplog.records]
    assert levels == [
        ("django_snowid.ids.issuer", "WARNING"),
        ("django_snowid.ids.issuer", "ERROR"),
    ]
    assert caplog.records[0].getMessage().startswith("Clock behind: layout 'default' waits")
    assert caplog.records[1].getMessage().startswith("Refused: layout 'default': the host")


def test_a_full_tick_is_counted_as_a_wait(clock):
    tiny = Layout(41, (NodePart("worker", 2),), 1)  # two ids a tick
    generator = SnowflakeGenerator(
        tiny, 0, clock=clock, sleep=clock.sleep, report=id_issuer._Reporter("tiny")
    )
    before = sample("snowid_waits_total", part="ids", cause="second_full")
    generator.next_ids(2)  # the tick's two ids
    generator.next_id()  # waits for the next tick
    assert sample("snowid_waits_total", part="ids", cause="second_full") == before + 1


# ---------------------------------------------------------------- leases


def _lease_record(throwaway_redis, generator):
    lease = lease_of(generator)
    key = lease.store.key(lease.pool.name)
    return throwaway_redis.client(), key, str(lease.worker)


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("source", ["redis"], indirect=True)
def test_lease_acquired_renewed_and_fenced(source, caplog, clock):
    acquired = sample("snowid_leases_acquired_total", store="redis")
    lost = sample("snowid_leases_lost_total", store="redis")
    refused = sample("snowid_refusals_total", part="ids", cause="lease_lost")
    renewals = sample("snowid_lease_renew_seconds_count", store="redis")
    with caplog.at_level(logging.INFO, logger="django_snowid"):
        generator = lease_generator(CLASSIC, 0, "redis", clock=clock, heartbeat=False)
        generator.next_id()
        assert sample("snowid_leases_acquired_total", store="redis") == acquired + 1
        # Past the horizon recorded at acquisition: the guard renews (and times it).
        clock.advance_ms(2000)
        generator.next_id()
        assert sample("snowid_lease_renew_seconds_count", store="redis") == renewals + 1
        # Fenced: another token takes the record; the next renewal is refused.
        lease = lease_of(generator)
        client = lease.store.client()
        key = lease.store.key(lease.pool.name)
        owner, _token, rest = client.hget(key, str(lease.worker)).decode().split("|", 2)
        client.hset(key, str(lease.worker), f"{owner}|another|{rest}")
        clock.advance_ms(2000)
        with pytest.raises(WorkerLeaseLost):
            generator.next_id()
    assert sample("snowid_leases_lost_total", store="redis") == lost + 1
    assert sample("snowid_refusals_total", part="ids", cause="lease_lost") == refused + 1
    # (A new Redis server first makes newcomers wait for live holders: "lost its records".)
    lines = [(r.levelname, r.getMessage().split(":")[0]) for r in caplog.records]
    assert lines[-3:] == [
        ("INFO", "Lease acquired"),
        ("WARNING", "Lease lost"),
        ("ERROR", "Refused"),
    ]


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("source", ["redis"], indirect=True)
def test_a_lease_re_asserted_after_a_flush_is_counted_and_logged(source, caplog, clock):
    generator = lease_generator(CLASSIC, 0, "redis", clock=clock, heartbeat=False)
    generator.next_id()
    lease = lease_of(generator)
    before = sample("snowid_recoveries_total", part="ids", store="redis")
    caplog.clear()  # (a new server first made newcomers wait: "lost its records")
    # What a flush does to the pool (on the test's own redis-server, ``source``).
    lease.store.client().delete(lease.store.key(lease.pool.name))
    clock.advance_ms(2000)  # past the recorded horizon: the guard renews
    with caplog.at_level(logging.INFO, logger="django_snowid"):
        generator.next_id()
    assert sample("snowid_recoveries_total", part="ids", store="redis") == before + 1
    (record,) = caplog.records
    assert (record.levelname, record.name) == ("WARNING", "django_snowid.workers.stores.redis")
    assert record.getMessage().startswith("Lease re-asserted: Redis had lost the record")
    clock.advance_ms(2000)
    generator.next_id()  # an ordinary renewal: nothing more
    assert sample("snowid_recoveries_total", part="ids", store="redis") == before + 1


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_lease_store_unreachable_is_a_refusal(throwaway_redis, clock, caplog):
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_WORKER_LEASE_TTL_S=1.5):
        generator = lease_generator(CLASSIC, 0, "redis", clock=clock, heartbeat=False)
        generator.next_id()
        before = sample("snowid_refusals_total", part="ids", cause="store_unreachable")
        throwaway_redis.stop()
        clock.advance_ms(2000)
        with (
            caplog.at_level(logging.ERROR, logger="django_snowid"),
            pytest.raises(WorkerIdUnavailable),
        ):
            generator.next_id()
        assert sample("snowid_refusals_total", part="ids", cause="store_unreachable") == before + 1
        assert caplog.records[-1].levelname == "ERROR"
        throwaway_redis.start()
        lease_of(generator).release()


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("source", ["redis"], indirect=True)
def test_a_new_holder_behind_the_horizon_waits_or_refuses(source, caplog):
    clock = FakeClock(start_ns=1_800_000_000_000 * MS)
    first = lease_generator(CLASSIC, 0, "redis", clock=clock, heartbeat=False)
    first.next_id()
    lease_of(first).release()  # records the end of the last tick it used
    waits = sample("snowid_waits_total", part="ids", cause="clock_behind")
    refusals = sample("snowid_refusals_total", part="ids", cause="clock_behind")
    behind = FakeClock(start_ns=clock.ns - 500 * MS)
    with caplog.at_level(logging.WARNING, logger="django_snowid"):
        second = lease_generator(CLASSIC, 0, "redis", clock=behind, sleep=behind.sleep,
                                 heartbeat=False)  # fmt: skip
    assert sample("snowid_waits_total", part="ids", cause="clock_behind") == waits + 1
    assert any("Clock behind" in r.getMessage() for r in caplog.records)
    second.next_id()
    lease_of(second).release()
    far = FakeClock(start_ns=behind.ns - 60_000 * MS)
    with pytest.raises(WorkerIdError, match="ahead of this host's clock"):
        lease_generator(CLASSIC, 0, "redis", clock=far, heartbeat=False)
    assert sample("snowid_refusals_total", part="ids", cause="clock_behind") == refusals + 1


# --------------------------------------------------------- order numbers


@pytest.mark.redis
@pytest.mark.django_db
@override_settings(SNOWID_METRICS=True, SNOWID_ORDER_BACKEND="redis")
def test_order_numbers_issued_and_the_busiest_second(clock):
    field = ShopOrder._meta.get_field("number")
    issuer = get_issuer(field.stream, field.format)
    get_store().clock = lambda: clock() / 10**9  # one second for all of them
    clock.ns = (clock.ns // 10**9 + 1) * 10**9
    set_order_state(field.stream, (field.format.local_second(clock.now()) - 1, 1))
    sample("snowid_order_busiest_second_fill_ratio")  # starts a new period
    before = sample("snowid_order_numbers_issued_total", stream=field.stream, store="redis")
    for user in range(3):
        issuer.next_number(user)
    issuer.next_numbers([1, 2])
    assert (
        sample("snowid_order_numbers_issued_total", stream=field.stream, store="redis")
        == before + 5
    )
    cap = field.format.max_sequence
    assert sample("snowid_order_busiest_second_fill_ratio") == 5 / cap
    assert sample("snowid_order_busiest_second_fill_ratio") == 0  # read: a new period


@pytest.mark.django_db
@override_settings(SNOWID_METRICS=False, SNOWID_ORDER_BACKEND="database")
def test_without_metrics_order_numbers_are_not_counted():
    field = ShopOrder._meta.get_field("number")
    before = sample("snowid_order_numbers_issued_total", stream=field.stream, store="database")
    ShopOrder.objects.create(user_id=1)
    assert (
        sample("snowid_order_numbers_issued_total", stream=field.stream, store="database") == before
    )


@pytest.mark.django_db
def test_order_refusals_and_waits_by_cause(backend, clock, caplog):
    field = TinyOrder._meta.get_field("number")
    clock.ns = (clock.ns // 10**9 + 1) * 10**9 + 100 * MS
    set_order_state(field.stream, (field.format.local_second(clock.now()), 7))
    with override_settings(SNOWID_ORDER_WHEN_FULL="raise"):
        get_store().clock = lambda: clock() / 10**9
        issuer = get_issuer(field.stream, field.format)
        before = sample("snowid_refusals_total", part="orders", cause="second_full")
        with caplog.at_level(logging.ERROR, logger="django_snowid"), pytest.raises(OrderSecondFull):
            issuer.next_number(1)
        assert sample("snowid_refusals_total", part="orders", cause="second_full") == before + 1
        assert caplog.records[-1].getMessage().startswith("Refused: All 7 order numbers")
    with override_settings(SNOWID_ORDER_WHEN_FULL="wait"):
        # The store's clock is the test's, and so is the issuer's wait for the next second.
        clock.ns = (clock.ns // 10**9 + 1) * 10**9 + 990 * MS
        get_store().clock = lambda: clock() / 10**9
        issuer = get_issuer(field.stream, field.format)
        issuer.sleep = clock.sleep
        set_order_state(field.stream, (field.format.local_second(clock.now()), 7))
        before = sample("snowid_waits_total", part="orders", cause="second_full")
        issuer.next_number(1)
        assert sample("snowid_waits_total", part="orders", cause="second_full") == before + 1
        set_order_state(field.stream, (field.format.local_second(clock.now()) + 60, 1))
        before = sample("snowid_refusals_total", part="orders", cause="clock_behind")
        with pytest.raises(OrderClockBehind):
            issuer.next_number(1)
        assert sample("snowid_refusals_total", part="orders", cause="clock_behind") == before + 1


@pytest.mark.redis
@pytest.mark.django_db
@override_settings(SNOWID_ORDER_BACKEND="redis")
def test_order_store_loss_and_failover_are_recovered_and_counted(caplog):
    field = ShopOrder._meta.get_field("number")
    issuer = get_issuer(field.stream, field.format)
    issuer.next_number(1)
    store = get_store()
    client, key = store.client(), store.key(field.stream)
    recoveries = sample("snowid_recoveries_total", part="orders", store="redis")
    resyncs = sample("snowid_failover_resyncs_total", part="orders", store="redis")
    with caplog.at_level(logging.INFO, logger="django_snowid"):
        client.delete(key)  # a flush, a restart without persistence
        issuer.next_number(1)
        assert sample("snowid_recoveries_total", part="orders", store="redis") == recoveries + 1
        client.hset(key, "rid", "another-server")  # a failover to a replica
        issuer.next_number(1)
    assert sample("snowid_failover_resyncs_total", part="orders", store="redis") == resyncs + 1
    lines = [(r.levelname, r.getMessage().split(":")[0]) for r in caplog.records]
    assert lines == [
        ("WARNING", "Store loss detected"),
        ("INFO", "Recovery done"),
        ("WARNING", "Store loss detected"),
        ("INFO", "Recovery done"),
    ]


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@override_settings(SNOWID_ORDER_BACKEND="redis")
def test_a_lost_stream_is_reported_once_whatever_the_callers(caplog):
    """Every caller finds the stream missing at once (a barrier holds them there); one
    recovery rebuilds it and one pair of lines says so, its time in UTC."""
    field = ShopOrder._meta.get_field("number")
    fmt = field.format
    issuer = get_issuer(field.stream, fmt)
    issuer.next_number(1)
    store = get_store()
    store.client().delete(store.key(field.stream))
    callers = 5
    all_saw_it = threading.Barrier(callers)
    reserve, met = store.reserve, threading.local()

    def reserve_and_meet(stream, args):
        outcome = reserve(stream, args)
        if outcome is MISSING and not getattr(met, "done", False):
            met.done = True
            all_saw_it.wait(timeout=30)
        return outcome

    store.reserve = reserve_and_meet
    recoveries = sample("snowid_recoveries_total", part="orders", store="redis")
    numbers = []

    def caller(user: int) -> None:
        numbers.extend(issuer.next_numbers([user]))
        connections.close_all()

    with caplog.at_level(logging.INFO, logger="django_snowid"):
        threads = [threading.Thread(target=caller, args=(user,)) for user in range(callers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(numbers) == callers
    lines = [(r.levelname, r.getMessage().split(":")[0]) for r in caplog.records]
    assert lines == [("WARNING", "Store loss detected"), ("INFO", "Recovery done")]
    assert sample("snowid_recoveries_total", part="orders", store="redis") == recoveries + 1
    resumed = min(fmt.position(n)[0] for n in numbers)
    when = iso_utc(fmt.time_of_local_second(resumed), milliseconds=False)
    assert f"resumes after {when} #0 (it held nothing)" in caplog.records[1].getMessage()


@pytest.mark.redis
@pytest.mark.django_db
def test_an_unreachable_order_store_is_a_refusal(throwaway_redis, caplog):
    with override_settings(SNOWID_ORDER_BACKEND="redis", CACHES=throwaway_redis.caches()):
        field = ShopOrder._meta.get_field("number")
        issuer = get_issuer(field.stream, field.format)
        issuer.next_number(1)
        throwaway_redis.stop()
        before = sample("snowid_refusals_total", part="orders", cause="store_unreachable")
        with (
            caplog.at_level(logging.ERROR, logger="django_snowid"),
            pytest.raises(OrderNumberUnavailable),
        ):
            issuer.next_number(1)
        after = sample("snowid_refusals_total", part="orders", cause="store_unreachable")
        assert after == before + 1
        assert "unreachable" in caplog.records[-1].getMessage()


# -------------------------------------------------------------- sequences


@pytest.mark.django_db
@override_settings(SNOWID_METRICS=True, SNOWID_SEQUENCES={"invoice": {}})
def test_sequence_values_issued_by_declared_name():
    before = sample("snowid_sequence_values_issued_total", sequence="invoice", store="database")
    undeclared = sample(
        "snowid_sequence_values_issued_total", sequence="undeclared", store="database"
    )
    next_value("invoice")
    next_values("invoice", 4)
    next_value("made-up-at-run-time")
    assert (
        sample("snowid_sequence_values_issued_total", sequence="invoice", store="database")
        == before + 5
    )
    assert (
        sample("snowid_sequence_values_issued_total", sequence="undeclared", store="database")
        == undeclared + 1
    )


@pytest.mark.django_db
@override_settings(SNOWID_METRICS=True, SNOWID_SEQUENCES={"customer": {}, "invoice": {}})
def test_values_of_sequence_fields_are_counted():
    """SequenceField and SequenceTextField draw their values as next_value() does."""
    customers = sample("snowid_sequence_values_issued_total", sequence="customer", store="database")
    invoices = sample("snowid_sequence_values_issued_total", sequence="invoice", store="database")
    Customer.objects.create()
    Customer.objects.bulk_create([Customer(), Customer()])
    Invoice.objects.create()
    after = sample("snowid_sequence_values_issued_total", sequence="customer", store="database")
    assert after == customers + 3
    assert (
        sample("snowid_sequence_values_issued_total", sequence="invoice", store="database")
        == invoices + 1
    )


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_sequence_field_refused_by_an_unreachable_store_is_counted(throwaway_redis, caplog):
    with override_settings(SNOWID_SEQUENCE_BACKEND="redis", CACHES=throwaway_redis.caches()):
        Customer.objects.create()
        throwaway_redis.stop()
        before = sample("snowid_refusals_total", part="sequences", cause="store_unreachable")
        with (
            caplog.at_level(logging.ERROR, logger="django_snowid"),
            pytest.raises(SequenceUnavailable),
        ):
            Customer.objects.create()
        after = sample("snowid_refusals_total", part="sequences", cause="store_unreachable")
        assert after == before + 1
        assert caplog.records[-1].getMessage().startswith("Refused: the sequence store 'redis'")


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@override_settings(SNOWID_SEQUENCE_BACKEND="redis")
def test_sequence_store_loss_and_failover_are_counted(caplog):
    from django_snowid.sequences.stores import get_store as sequence_store

    next_value("ledger")  # a new sequence: Redis had no state of it
    caplog.clear()
    store = sequence_store()
    client, key = store.client(), store.key("ledger")
    recoveries = sample("snowid_recoveries_total", part="sequences", store="redis")
    resyncs = sample("snowid_failover_resyncs_total", part="sequences", store="redis")
    with caplog.at_level(logging.INFO, logger="django_snowid"):
        client.delete(key)
        next_value("ledger")
        client.hset(key, "rid", "another-server")
        next_value("ledger")
    assert sample("snowid_recoveries_total", part="sequences", store="redis") == recoveries + 1
    assert sample("snowid_failover_resyncs_total", part="sequences", store="redis") == resyncs + 1
    assert [r.levelname for r in caplog.records] == ["WARNING", "INFO", "WARNING", "INFO"]


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@override_settings(SNOWID_SEQUENCE_BACKEND="redis", SNOWID_SEQUENCES={"invoice": {"kind": "daily"}})
def test_a_new_sequence_and_a_new_day_are_no_store_loss(caplog):
    """A name Redis never held and that has no database mark is new: an INFO line, no
    warning, no recovery (a daily sequence gets a new name every day)."""
    from django_snowid.sequences.stores import get_store as sequence_store

    clock = Clock(datetime(2026, 11, 23, 23, 59, 59, tzinfo=timezone.utc))
    sequence_store().clock = clock
    recoveries = sample("snowid_recoveries_total", part="sequences", store="redis")
    with caplog.at_level(logging.INFO, logger="django_snowid"):
        next_value("ledger")
        next_value("invoice")
        clock.now += 1  # a new day
        next_value("invoice")
        next_value("invoice")
    assert [r.getMessage() for r in caplog.records] == [
        "Sequence started: 'ledger' begins at 1 in Redis, under its new database mark.",
        "Sequence started: 'invoice:20261123' begins at 1 in Redis, under its new database mark.",
        "Sequence started: 'invoice:20261124' begins at 1 in Redis, under its new database mark.",
    ]
    assert {r.levelname for r in caplog.records} == {"INFO"}
    assert sample("snowid_recoveries_total", part="sequences", store="redis") == recoveries


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@override_settings(SNOWID_SEQUENCE_BACKEND="redis")
def test_a_lost_sequence_is_reported_once_whatever_the_callers(caplog):
    """Every caller finds the sequence missing at once (a barrier holds them there): one of
    them re-syncs it, and says so in one pair of lines."""
    from django_snowid.sequences.stores import get_store as sequence_store
    from django_snowid.sequences.stores.redis import DRAW, Outcome

    next_value("ledger")
    store = sequence_store()
    store.client().delete(store.key("ledger"))  # Redis lost it
    callers = 5
    all_saw_it = threading.Barrier(callers)
    run, met = store.redis.run, threading.local()

    def run_and_meet(script, keys, args):
        reply = run(script, keys, args)
        if script is DRAW and reply.outcome is Outcome.LOST and not getattr(met, "done", False):
            met.done = True
            all_saw_it.wait(timeout=30)
        return reply

    store.redis.run = run_and_meet
    recoveries = sample("snowid_recoveries_total", part="sequences", store="redis")
    values = []

    def caller() -> None:
        values.append(next_value("ledger"))
        connections.close_all()

    with caplog.at_level(logging.INFO, logger="django_snowid"):
        threads = [threading.Thread(target=caller) for _ in range(callers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(set(values)) == callers
    messages = [(r.levelname, r.getMessage()) for r in caplog.records]
    resumed = min(values)
    assert messages == [
        (
            "WARNING",
            "Store loss detected: Redis holds no state of sequence 'ledger', which has a "
            "database mark (lost in a restart, a flush or a failover); re-syncing it above "
            "its mark.",
        ),
        ("INFO", f"Recovery done: sequence 'ledger' resumes at {resumed}, above its mark."),
    ]
    assert sample("snowid_recoveries_total", part="sequences", store="redis") == recoveries + 1


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_an_unreachable_sequence_store_is_a_refusal(throwaway_redis):
    with override_settings(SNOWID_SEQUENCE_BACKEND="redis", CACHES=throwaway_redis.caches()):
        next_value("ledger")
        throwaway_redis.stop()
        before = sample("snowid_refusals_total", part="sequences", cause="store_unreachable")
        with pytest.raises(SequenceUnavailable):
            next_value("ledger")
        after = sample("snowid_refusals_total", part="sequences", cause="store_unreachable")
        assert after == before + 1


# ------------------------------------------------------- gauges, settings


@override_settings(
    SNOWID_LAYOUTS={"public": "js53", "short": {"preset": "classic", "time_bits": 36}}
)
def test_time_bits_remaining_per_layout():
    from django_snowid.settings_layouts import get_layout

    for name in ("public", "short"):
        remaining = sample("snowid_time_bits_remaining_seconds", layout=name)
        expected = get_layout(name).exhausted_at.timestamp() - time.time()
        assert abs(remaining - expected) < 60
    assert sample("snowid_time_bits_remaining_seconds", layout="short") < sample(
        "snowid_time_bits_remaining_seconds", layout="public"
    )


def test_every_metric_is_exposed_with_its_name():
    registry = CollectorRegistry()
    registry.register(SnowidCollector())
    text = generate_latest(registry).decode()
    for name in metrics.COUNTERS:
        assert (
            f"# TYPE snowid_{name}_total counter" in text or f"# TYPE snowid_{name} counter" in text
        )
    for name in (
        "snowid_order_busiest_second_fill_ratio gauge",
        "snowid_lease_renew_seconds histogram",
        "snowid_time_bits_remaining_seconds gauge",
    ):
        assert f"# TYPE {name}" in text


def test_the_collector_is_registered_only_when_asked(settings):
    from django.apps import apps
    from prometheus_client import REGISTRY

    from django_snowid.apps import SnowidConfig
    from django_snowid.metrics import collector

    def registered() -> bool:
        return any(isinstance(c, SnowidCollector) for c in REGISTRY._collector_to_names)

    assert not registered()  # SNOWID_METRICS is off by default
    settings.SNOWID_METRICS = True
    SnowidConfig.ready(apps.get_app_config("django_snowid"))
    try:
        assert registered()
    finally:
        for known, installed in list(collector._installed):
            known.unregister(installed)
        collector._installed.clear()


def test_in_multiprocess_mode_the_counts_are_written_at_the_end_of_requests(
    settings, monkeypatch, tmp_path
):
    """With PROMETHEUS_MULTIPROC_DIR set, Django's start installs the flusher (a request's
    end writes the counts), and no collector: a scrape reads the files."""
    import atexit

    from django.apps import apps
    from django.core.signals import request_finished
    from prometheus_client import REGISTRY

    from django_snowid.apps import SnowidConfig
    from django_snowid.metrics import multiprocess

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    settings.SNOWID_METRICS = True
    SnowidConfig.ready(apps.get_app_config("django_snowid"))
    try:
        assert not any(isinstance(c, SnowidCollector) for c in REGISTRY._collector_to_names)
        assert len(multiprocess._flusher) == 1
        assert request_finished.disconnect(dispatch_uid="snowid-metrics-flush")
    finally:
        atexit.unregister(multiprocess._exit_flush)
        multiprocess._flusher.clear()


def test_metrics_settings_are_checked(settings):
    from django_snowid.metrics.checks import check_metrics, check_time_bits_horizon

    settings.SNOWID_METRICS = "yes"
    assert [m.id for m in check_metrics()] == ["django_snowid.E701"]
    settings.SNOWID_METRICS = True
    assert check_metrics() == []
    settings.SNOWID_HEALTH_TIME_BITS_HORIZON = 5
    assert [m.id for m in check_time_bits_horizon()] == ["django_snowid.E702"]
    settings.SNOWID_HEALTH_TIME_BITS_HORIZON = timedelta(days=5 * 365)
    # 36 bits of milliseconds: about two years from the epoch.
    settings.SNOWID_LAYOUTS = {
        "short": {"preset": "classic", "time_bits": 36, "epoch": "2026-01-01T00:00:00Z"}
    }
    assert "django_snowid.W700" in [m.id for m in check_time_bits_horizon()]
    with pytest.raises(SystemCheckError, match="E701"):
        settings.SNOWID_METRICS = 1
        call_command("check", databases=[])


def test_the_multiprocess_directory_is_checked(settings, tmp_path, monkeypatch):
    from django_snowid.metrics.checks import check_metrics

    settings.SNOWID_METRICS = True
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "missing"))
    (message,) = check_metrics()
    assert message.id == "django_snowid.E703"
    assert repr(str(tmp_path / "missing")) in message.msg
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    assert check_metrics() == []
    settings.SNOWID_METRICS = False  # no metrics: the directory is none of ours
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "missing"))
    assert check_metrics() == []


def test_every_logger_is_in_the_django_snowid_namespace():
    import ast
    from pathlib import Path

    root = Path(django_snowid.__file__).parent
    names = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "getLogger"
                and node.args
            ):
                names.append((path.name, ast.unparse(node.args[0])))
    assert len(names) >= 5
    assert {name for _, name in names} == {"__name__"}, names


@pytest.mark.redis
@pytest.mark.timeout(60)
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("source", ["redis"], indirect=True)
def test_a_lease_lost_inside_the_generator_keeps_its_ids_counted(source):
    # The guard fences the lease while the generator holds its lock, and the issuer then
    # retires the generator, reading its count: that read must not wait for the lock.
    base = sample("snowid_ids_issued_total", layout="default", store="redis")
    django_snowid.next_ids(5)
    generator = id_issuer.get_generator()
    lease_of(generator)._lost = True  # as a heartbeat that found the lease gone marks it
    with pytest.raises(WorkerLeaseLost):
        for _ in range(10**7):  # until the next tick's guard
            django_snowid.next_id()
    assert generator.issued() >= 5
    retired = base + generator.issued()
    assert sample("snowid_ids_issued_total", layout="default", store="redis") == retired
    django_snowid.next_id()  # a new lease, a new generator
    assert sample("snowid_ids_issued_total", layout="default", store="redis") == retired + 1


@pytest.mark.slow
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_lease_store_outage_is_one_line_not_one_a_heartbeat(throwaway_redis, caplog):
    with override_settings(
        CACHES=throwaway_redis.caches(),
        SNOWID_WORKER_ID_SOURCE="redis",
        SNOWID_WORKER_LEASE_TTL_S=1.5,  # a heartbeat every 0.5 s, retried every 0.5 s
    ):
        django_snowid.next_id()
        lease = lease_of(id_issuer.get_generator())
        caplog.clear()
        throwaway_redis.stop()
        deadline = time.monotonic() + 10
        while not lease._lost and time.monotonic() < deadline:  # the heartbeats fail
            time.sleep(0.05)
        messages = [r.getMessage() for r in caplog.records]
        assert lease._lost
        assert sum("unreachable: the heartbeat" in m for m in messages) == 1, messages
        assert sum(m.startswith("Lease lost") for m in messages) == 1, messages
        throwaway_redis.start()
        id_issuer.reset()


def test_refusals_of_a_kind_are_logged_once_every_ten_seconds(monkeypatch, caplog):
    now = [1000.0]
    monkeypatch.setattr(metrics, "_now", lambda: now[0])
    logger = logging.getLogger("django_snowid.orders.issuer")
    before = sample("snowid_refusals_total", part="orders", cause="store_unreachable")
    for _ in range(500):  # an outage under load
        metrics.refused(logger, "orders", "store_unreachable", "Redis is down.")
    metrics.refused(logger, "orders", "clock_behind", "another kind")
    now[0] += 10
    metrics.refused(logger, "orders", "store_unreachable", "Redis is down.")
    assert sample("snowid_refusals_total", part="orders", cause="store_unreachable") == before + 501
    assert [r.getMessage() for r in caplog.records] == [
        "Refused: Redis is down.",
        "Refused: another kind",
        "Refused: Redis is down. (499 more refused since the previous line)",
    ]
