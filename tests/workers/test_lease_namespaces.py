"""Lease namespaces that survive deploys: a changed key prefix, a layout whose node bits
moved, a smaller pool, and another epoch reading the same records."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connections
from django.test import override_settings

import django_snowid
from django_snowid.core.layout import DEFAULT_EPOCH, layout_from_spec
from django_snowid.exceptions import WorkerLayoutConflict, WorkerPoolExhausted
from django_snowid.ids import issuer as ids
from django_snowid.workers.lease import release_all
from django_snowid.workers.leased import lease_generator, lease_of
from django_snowid.workers.stores import get_lease_store
from tests.support import Children, ThrowawayRedis
from tests.workers.deployments import deployed_process, eight_processes

pytestmark = pytest.mark.django_db(transaction=True)

TTL_S = 1.5  # a brand-new Redis pool waits one TTL + margin before its first lease
CLASSIC = {"time_bits": 41, "node": {"worker": 10}, "sequence_bits": 12}
MOVED = {"time_bits": 41, "node": {"worker": 12}, "sequence_bits": 10}  # node bits moved


@pytest.fixture(params=["database", pytest.param("redis", marks=pytest.mark.redis)])
def lease_settings(request, tmp_path):
    """Settings of a lease source; Redis is a server of the test's own (its lease keys
    depend on no setting a test could vary)."""
    server = ThrowawayRedis(str(tmp_path)) if request.param == "redis" else None
    extra = {}
    if server is not None:
        server.start()
        extra["CACHES"] = server.caches()
    try:
        options = {
            "SNOWID_WORKER_ID_SOURCE": request.param,
            "SNOWID_WORKER_LEASE_TTL_S": TTL_S,
            "SNOWID_WORKER_ID": 0,
            "SNOWID_LAYOUT": CLASSIC,
            "SNOWID_LAYOUTS": {},
            **extra,
        }
        with override_settings(**options):
            ids.reset()
            yield options
            ids.reset()
            release_all()
    finally:
        if server is not None:
            server.stop()


@pytest.mark.slow
@pytest.mark.redis
def test_rolling_deploy_that_changes_the_key_prefix_repeats_no_id(tmp_path):
    """Leases of 5 s, not 1.5: eight processes issuing at once on two cores, beside the
    other tests, may keep a heartbeat from its turn longer than 1.5 s, and a process whose
    lease ran out refuses (WorkerLeaseLost), as it should; a new pool waits one TTL."""
    server = ThrowawayRedis(str(tmp_path))
    server.start()
    try:
        common = {
            "CACHES": server.caches(),
            "SNOWID_WORKER_ID_SOURCE": "redis",
            "SNOWID_WORKER_LEASE_TTL_S": 5.0,
        }
        old = {**common, "SNOWID_REDIS_KEY_PREFIX": "shop"}
        new = {**common, "SNOWID_REDIS_KEY_PREFIX": "shop-v2"}
        everything = eight_processes(deployed_process, [old if i % 2 else new for i in range(8)])
    finally:
        server.stop()
    assert len(everything) == 200_000
    assert len(set(everything)) == len(everything), "old and new processes shared worker ids"


def _hold_a_lease(options: dict[str, object], spec: dict[str, object], queue, stop) -> None:
    with override_settings(**{**options, "SNOWID_LAYOUT": spec}):
        ids.reset()
        queue.put(django_snowid.decode(django_snowid.next_id()).node)
        stop.wait(60)
        ids.reset()  # a graceful stop releases the lease
        connections.close_all()
    queue.put("released")


def test_a_layout_whose_node_bits_moved_refuses_while_the_old_one_runs(lease_settings):
    with Children() as old:
        old.start(_hold_a_lease, lease_settings, CLASSIC, old.queue, old.stop)
        assert old.results() == [0]
        with override_settings(SNOWID_LAYOUT=MOVED):
            ids.reset()
            with pytest.raises(
                WorkerLayoutConflict, match=r"'node-bits-12-10'.*the layout changed"
            ):
                django_snowid.next_id()
        store = get_lease_store(lease_settings["SNOWID_WORKER_ID_SOURCE"])
        live = [
            lease
            for lease in store.leases()
            if lease.live(time.time_ns() // 1_000_000)
            and not lease.owner.startswith("database:")  # database ids' reservations
        ]
        assert [(lease.pool, lease.worker) for lease in live] == [("node-bits-12-10", 0)], (
            "the refused process left no lease behind"
        )
        old.stop.set()
        assert old.results() == ["released"]
    # The old layout's lease is released: the new one issues.
    with override_settings(SNOWID_LAYOUT=MOVED):
        ids.reset()
        assert django_snowid.decode(django_snowid.next_id()).parts == {"worker": 0}


def _hold_the_pool(options: dict[str, object], size: int, queue, stop) -> None:
    layout = layout_from_spec(CLASSIC, name="default")
    with override_settings(**options, SNOWID_WORKER_POOL_SIZE=size):
        source = str(options["SNOWID_WORKER_ID_SOURCE"])
        generators = [lease_generator(layout, 0, source) for _ in range(size)]
        queue.put(sorted(g.node for g in generators))
        stop.wait(60)  # the first stop: release worker id 6, keep the others
        lease_of(generators[6]).release()
        queue.put("released 6")
        time.sleep(4 * TTL_S)  # the others keep renewing their leases meanwhile
        queue.put(sorted(lease.worker for lease in _live(options)))
        release_all()
        connections.close_all()


def _live(options: dict[str, object]) -> list:
    store = get_lease_store(str(options["SNOWID_WORKER_ID_SOURCE"]))
    now = time.time_ns() // 1_000_000
    return [lease for lease in store.leases("node-bits-12-10") if lease.live(now)]


@pytest.mark.slow
def test_a_smaller_pool_strands_no_live_holder(lease_settings):
    with Children() as old:
        old.start(_hold_the_pool, lease_settings, 8, old.queue, old.stop)
        assert old.results() == [list(range(8))]
        with override_settings(SNOWID_WORKER_POOL_SIZE=4):
            ids.reset()
            with pytest.raises(WorkerPoolExhausted):
                django_snowid.next_id()  # 0..7 all held
            old.stop.set()
            assert old.results() == ["released 6"]
            ids.reset()
            # Worker ids 4..7 still live above the new size: a newcomer takes the one freed.
            assert django_snowid.decode(django_snowid.next_id()).node == 6
            assert old.results() == [list(range(8))], "holders above the new size kept theirs"


def test_another_epoch_reads_the_records_as_times(lease_settings):
    """A horizon written under one epoch means the same instant under another: a project
    (or a deploy) with an epoch a day later issues at once, not a day later."""
    source = str(lease_settings["SNOWID_WORKER_ID_SOURCE"])
    first = layout_from_spec(CLASSIC, epoch=DEFAULT_EPOCH, name="default")
    later = layout_from_spec(CLASSIC, epoch=first.epoch + timedelta(days=1), name="default")
    generator = lease_generator(first, 0, source)
    issued = generator.next_id()
    lease_of(generator).release()
    again = lease_generator(later, 0, source)
    assert again.node == generator.node
    assert later.decode(again.next_id()).time >= first.decode(issued).time
    # The horizon the store keeps is a time: about now, not a day ahead or behind.
    (record,) = get_lease_store(source).leases("node-bits-12-10")
    assert abs(record.horizon_ms - time.time_ns() // 1_000_000) < 5_000
