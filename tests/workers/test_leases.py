"""Worker-id leases against real Redis, real databases and real lock files."""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
import threading
import time
from datetime import datetime, timezone

import pytest
from django.db import connections
from django.test import override_settings

import django_snowid
from django_snowid.core.layout import PRESETS, Layout, NodePart
from django_snowid.exceptions import (
    WorkerIdError,
    WorkerIdUnavailable,
    WorkerLeaseLost,
    WorkerPoolExhausted,
)
from django_snowid.ids import issuer as process_ids
from django_snowid.workers.lease import LeaseHolder
from django_snowid.workers.leased import lease_generator
from django_snowid.workers.pool import pool_for
from django_snowid.workers.stores import get_lease_store
from tests.support import (
    LEASE_TTL_S,
    MS,
    Children,
    FakeClock,
    free_port,
    redis_caches,
)
from tests.testapp.models import Product

# The Redis store falls back to the database when it has no record of a worker id, and
# the children of the multi-process tests need committed data: every test is transactional.
pytestmark = pytest.mark.django_db(transaction=True)

CLASSIC = PRESETS["classic"]
TWO_BITS = {"time_bits": 41, "node": {"worker": 2}, "sequence_bits": 12}

STORES = [
    pytest.param("redis", marks=pytest.mark.redis),
    "database",
    "slot",
]


def _issue_50k(source: str) -> tuple[int, list[int]]:
    generator = lease_generator(CLASSIC, 0, source)
    ids = generator.next_ids(50_000)
    connections.close_all()
    return generator.node, ids


@pytest.mark.slow
@pytest.mark.parametrize("source", STORES, indirect=True)
def test_eight_processes_take_eight_worker_ids(source):
    """Nothing here waits for a lease to expire: the leases last 30 s, so that eight
    processes on a busy CI machine renew in time (a late renewal fences, as it must)."""
    connections.close_all()
    with (
        override_settings(SNOWID_WORKER_LEASE_TTL_S=30),
        multiprocessing.get_context("fork").Pool(8) as pool,
    ):
        results = pool.map(_issue_50k, [source] * 8)
    nodes = [node for node, _ in results]
    assert sorted(nodes) == list(range(8)), nodes
    everything = [i for _, ids in results for i in ids]
    assert len(everything) == 400_000 and len(set(everything)) == 400_000
    for node, ids in results:
        assert {CLASSIC.decode(i).node for i in ids[::5000]} == {node}


def _hold_and_issue(source: str, reported, ready, **options) -> None:
    generator = lease_generator(CLASSIC, 0, source, **options)
    reported[0] = generator.node
    ready.set()
    while True:  # until SIGKILL
        reported[1] = max(generator.next_ids(100))


@pytest.mark.slow
@pytest.mark.parametrize("source", STORES, indirect=True)
def test_killed_holders_id_is_reused_after_the_ttl(source):
    if source == "database" and connections["default"].vendor == "sqlite":
        pytest.skip("SQLite keeps the database source's leases beside its file (slot rules)")
    old_node, old_max = _killed_holder(source, ttl_runs_out=False)
    killed_at = datetime.now(timezone.utc)
    assert old_node == 0 and old_max > 0
    store = get_lease_store(source)
    pool = pool_for(CLASSIC, 0)
    if source != "slot":  # a lock file is free at once; a lease only after its TTL
        early = lease_generator(CLASSIC, 0, source, heartbeat=False)
        assert early.node == 1
        time.sleep(1.6)
    generator = lease_generator(CLASSIC, 0, source)
    assert generator.node == old_node  # the dead holder's id, reused
    first = generator.next_id()
    assert first > old_max
    # later than anything the dead holder can have issued, reported or not
    killed_ms = killed_at.replace(microsecond=killed_at.microsecond // 1000 * 1000)
    assert CLASSIC.decode(first).time >= killed_ms
    assert store.name == source and pool.size == 1024


def _killed_holder(source: str, *, ttl_runs_out: bool = True, **options) -> tuple[int, int]:
    """A real process holds worker 0 and issues ids until its heartbeat has recorded a
    horizon; then SIGKILL (it releases nothing); with ``ttl_runs_out``, wait until its
    lease expired. Returns its worker id and the largest id it reported."""
    with Children() as children:
        # No lock: a holder killed while it held the array's lock would leave it locked.
        reported = children.context.Array("q", [-1, -1], lock=False)
        ready = children.context.Event()
        holder = children.start(
            functools.partial(_hold_and_issue, **options), source, reported, ready
        )
        assert ready.wait(20)
        time.sleep(0.6)  # one heartbeat (every ttl / 3 = 0.5 s)
        os.kill(holder.pid, signal.SIGKILL)
        holder.join()
    assert reported[0] == 0 and reported[1] > 0
    if ttl_runs_out:
        time.sleep(1.6)  # the time-to-live runs out
    return reported[0], reported[1]


def _crash_after_a_heartbeat(source: str, **options) -> int:
    """:func:`_killed_holder` after its lease expired: the largest id it reported."""
    return _killed_holder(source, **options)[1]


def behind(ms: float):
    return lambda: time.time_ns() - int(ms * 1_000_000)


@pytest.mark.slow
@pytest.mark.parametrize("source", STORES[:2], indirect=True)
def test_new_holder_with_a_clock_behind_waits(source):
    if source == "database" and connections["default"].vendor == "sqlite":
        pytest.skip("SQLite keeps the database source's leases beside its file (slot rules)")
    last = _crash_after_a_heartbeat(source)
    # The crashed holder may have issued until its horizon (last heartbeat + ttl), which
    # its lease records: a new holder whose clock is 1.5 s behind it waits those 1.5 s
    # out, never more (its clock, and the time its sleeps take, are the test's).
    (record,) = [
        lease
        for lease in get_lease_store(source).leases(pool_for(CLASSIC, 0).name)
        if lease.worker == 0
    ]
    clock = FakeClock(start_ns=(record.horizon_ms - 1500) * MS)
    waited = lease_generator(CLASSIC, 0, source, clock=clock, sleep=clock.sleep)
    assert waited.node == 0
    assert clock.sleeps == [1.5]
    assert waited.next_id() > last


@pytest.mark.slow
@pytest.mark.parametrize("source", STORES[:2], indirect=True)
def test_new_holder_with_a_clock_far_behind_refuses(source):
    if source == "database" and connections["default"].vendor == "sqlite":
        pytest.skip("SQLite keeps the database source's leases beside its file (slot rules)")
    _crash_after_a_heartbeat(source, clock=behind(800))
    with pytest.raises(WorkerIdError, match="ahead of this host's clock"):
        lease_generator(CLASSIC, 0, source, clock=behind(60_000), heartbeat=False)


@pytest.mark.slow
@pytest.mark.redis
def test_redis_down_longer_than_the_ttl_fences_then_recovers(throwaway_redis):
    with override_settings(
        CACHES=throwaway_redis.caches(),
        SNOWID_WORKER_ID_SOURCE="redis",
        SNOWID_WORKER_LEASE_TTL_S=1.5,
    ):
        issued: list[tuple[float, int]] = []
        refusals: list[str] = []
        # The pk field keeps its generator between rows: it must let go of a fenced one.
        pk_field = Product._meta.pk
        from_field: list[int] = []  # indexes in issued of the field's ids

        def run_for(seconds: float) -> None:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                try:
                    issued.append((time.monotonic(), django_snowid.next_id()))
                    value = pk_field.new_id()
                    from_field.append(len(issued))
                    issued.append((time.monotonic(), value))
                except (WorkerLeaseLost, WorkerIdUnavailable) as exc:
                    refusals.append(type(exc).__name__)
                    time.sleep(0.01)

        run_for(0.3)
        throwaway_redis.stop()
        stopped = time.monotonic()
        run_for(2.5)
        assert "WorkerLeaseLost" in refusals
        # nothing was issued once the lease may have expired
        assert all(t < stopped + 1.5 for t, _ in issued)
        throwaway_redis.start()
        before = len(issued)
        run_for(0.5)
        process_ids.reset()
    assert len(issued) > before, "issuing resumed after Redis came back"
    assert any(i >= before for i in from_field), "the pk field resumed after Redis came back"
    ids = [i for _, i in issued]
    assert ids == sorted(set(ids)), "an id repeated or went down"


def _issue_after_fork(everyone_forked: object) -> list[int]:
    # the three tasks meet before issuing: no pool process can take two of them
    everyone_forked.wait(30)  # type: ignore[attr-defined]
    ids = django_snowid.next_ids(20_000)
    connections.close_all()
    return ids


@pytest.mark.slow
@pytest.mark.parametrize("source", STORES, indirect=True)
def test_fork_after_first_use(source):
    parent_first = django_snowid.next_ids(1000)
    connections.close_all()
    context = multiprocessing.get_context("fork")
    with context.Manager() as manager, context.Pool(3) as pool:
        children = pool.map(_issue_after_fork, [manager.Barrier(3)] * 3, chunksize=1)
    parent_after = django_snowid.next_ids(1000)
    everything = parent_first + parent_after + [i for ids in children for i in ids]
    assert len(set(everything)) == len(everything)
    nodes = {CLASSIC.decode(ids[0]).node for ids in children}
    assert len(nodes) == 3 and CLASSIC.decode(parent_first[0]).node not in nodes


def _hold(args: tuple[str, object, object]) -> int:
    source, held, release = args
    layout = Layout(41, (NodePart("worker", 2),), 12)
    generator = lease_generator(layout, 0, source)
    held.release()  # type: ignore[attr-defined]
    release.wait(30)  # type: ignore[attr-defined]
    return generator.node


@pytest.mark.slow
@pytest.mark.parametrize("source", STORES, indirect=True)
def test_pool_exhaustion_with_a_two_bit_node(source):
    layout = Layout(41, (NodePart("worker", 2),), 12)
    connections.close_all()
    context = multiprocessing.get_context("fork")
    with context.Manager() as manager:
        held, release = manager.Semaphore(0), manager.Event()
        with context.Pool(4) as pool:
            holders = pool.map_async(_hold, [(source, held, release)] * 4)
            for _ in range(4):  # each holder says when it holds its lease
                assert held.acquire(timeout=30), holders.get(0) if holders.ready() else "hung"
            with pytest.raises(WorkerPoolExhausted, match=r"all 4 worker ids are leased \(4 live"):
                lease_generator(layout, 0, source, heartbeat=False)
            release.set()
            assert sorted(holders.get(30)) == [0, 1, 2, 3]


@pytest.mark.redis
def test_unreachable_redis_at_lease_time_issues_nothing():
    with (
        override_settings(
            CACHES=redis_caches(f"redis://127.0.0.1:{free_port()}/0"),
            SNOWID_WORKER_ID_SOURCE="redis",
        ),
        pytest.raises(WorkerIdUnavailable, match="unreachable for worker-id leases"),
    ):
        django_snowid.next_id()


@pytest.mark.redis
def test_garbage_in_the_pool_key_is_a_clear_error(throwaway_redis):
    with override_settings(
        CACHES=throwaway_redis.caches(),
        SNOWID_WORKER_ID_SOURCE="redis",
        SNOWID_WORKER_LEASE_TTL_S=1.5,  # a new pool waits one TTL + margin
    ):
        store = get_lease_store("redis")
        key = store.key(pool_for(CLASSIC, 0).name)  # type: ignore[attr-defined]
        throwaway_redis.client().hset(key, "0", "garbage")
        with pytest.raises(WorkerIdUnavailable, match="is garbage"):
            django_snowid.next_id()
        throwaway_redis.client().delete(key)
        throwaway_redis.client().set(key, "a string")
        with pytest.raises(WorkerIdError, match="refused the worker-id pool key"):
            django_snowid.next_id()


def test_worker_id_outside_the_layout_is_a_check_error():
    from django.core import checks

    with override_settings(
        SNOWID_WORKER_ID_SOURCE="slot",
        SNOWID_LAYOUT="datacenter",
        SNOWID_LAYOUTS={},
        SNOWID_WORKER_ID={"datacenter": 40},
    ):
        assert "django_snowid.E004" in [m.id for m in checks.run_checks(databases=[])]


@pytest.mark.parametrize("source", STORES, indirect=True)
def test_named_parts_lease_the_last_part(source):
    with override_settings(
        SNOWID_LAYOUT="datacenter", SNOWID_LAYOUTS={}, SNOWID_WORKER_ID={"datacenter": 7}
    ):
        decoded = django_snowid.decode(django_snowid.next_id())
        assert decoded.parts == {"datacenter": 7, "machine": 0}
        process_ids.reset()


@pytest.mark.redis
def test_workers_command_lists_live_leases(settings, throwaway_redis):
    import json
    from io import StringIO

    from django.core.management import call_command

    settings.CACHES = throwaway_redis.caches()
    settings.SNOWID_WORKER_ID_SOURCE = "redis"
    settings.SNOWID_WORKER_LEASE_TTL_S = 1.5  # a new pool waits one TTL + margin
    django_snowid.next_id()
    out = StringIO()
    call_command("snowid_workers", "--json", stdout=out)
    rows = json.loads(out.getvalue())
    assert [(r["pool"], r["worker_id"]) for r in rows] == [("node-bits-12-10", 0)]
    assert rows[0]["owner"].endswith(f":{os.getpid()}") and rows[0]["expires_in_s"] > 0
    process_ids.reset()  # releases the lease
    out = StringIO()
    call_command("snowid_workers", stdout=out)
    assert "No live worker-id leases" in out.getvalue()


def test_unreachable_database_at_lease_time_and_for_order_numbers():
    """A database store that cannot be reached is a clear error; nothing is issued."""
    from django.db import connection

    from django_snowid.core.order_format import OrderNumberFormat
    from django_snowid.exceptions import OrderNumberUnavailable
    from django_snowid.orders.issuer import StreamIssuer

    saved = dict(connection.settings_dict)
    connection.close()
    if connection.vendor == "sqlite":
        connection.settings_dict["NAME"] = "/nonexistent-dir/snowid.sqlite3"
    else:
        connection.settings_dict["PORT"] = str(free_port())
    try:
        if connection.vendor != "sqlite":  # SQLite's leases live beside its file
            with pytest.raises(WorkerIdUnavailable, match="unreachable for worker-id leases"):
                lease_generator(CLASSIC, 0, "database", heartbeat=False)
        with override_settings(SNOWID_ORDER_BACKEND="database"):
            issuer = StreamIssuer("down", OrderNumberFormat())
            with pytest.raises(OrderNumberUnavailable, match="unreachable for order numbers"):
                issuer.next_number(1)
    finally:
        connection.close()
        connection.settings_dict.update(saved)


@pytest.mark.parametrize("source", STORES, indirect=True)
def test_a_renewal_in_flight_never_writes_a_released_lease_again(source):
    """A heartbeat renewing while the process releases its lease (a graceful stop): the
    release waits for the renewal, so the store holds no live lease of it afterwards."""
    store = get_lease_store(source)
    holder = LeaseHolder(store, pool_for(CLASSIC, 0), ttl_s=LEASE_TTL_S).acquire()
    renewing, released = threading.Event(), threading.Event()
    renew, release = store.renew, store.release

    def slow_renew(*args: object, **kwargs: object) -> bool:
        renewing.set()
        released.wait(0.5)  # on the old code the release lands meanwhile
        return renew(*args, **kwargs)

    def noted_release(*args: object, **kwargs: object) -> None:
        release(*args, **kwargs)
        released.set()

    store.renew, store.release = slow_renew, noted_release  # type: ignore[method-assign]
    try:
        beat = threading.Thread(target=holder._beat)
        beat.start()
        assert renewing.wait(5)
        holder.release()
        beat.join()
    finally:
        store.renew, store.release = renew, release  # type: ignore[method-assign]
    now_ms = time.time_ns() // 1_000_000
    mine = [lease for lease in store.leases(holder.pool.name) if lease.worker == holder.worker]
    assert not [lease for lease in mine if lease.live(now_ms)], mine
    assert holder.released and not holder.lost
