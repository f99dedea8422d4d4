"""Our Redis parts on a 3-primary Redis Cluster the test starts, a slot migrated meanwhile:
named sequences and order numbers, each from four processes."""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import pytest
import redis
from django.db import connections
from django.test import override_settings

from django_snowid.orders.stores import get_store as get_order_store
from django_snowid.sequences import next_value
from django_snowid.sequences.stores import get_store
from django_snowid.sequences.stores.database import read_marks
from django_snowid.stores.redis_scripts import RedisScript
from tests import redis_topologies
from tests.redis_topologies import until_after
from tests.testapp.models import ShopOrder

pytestmark = [pytest.mark.redis, pytest.mark.slow]

PROCESSES = 4
COUNT = RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])", safe_to_retry=True)


def test_script_follows_ask_and_moved_and_loads_itself_on_each_node(cluster):
    client = cluster.client()
    key = "{snowid-cluster-test}:count"
    slot = client.keyslot(key)
    source = cluster.owner(slot)
    target = next(s for s in cluster.servers if s is not source)
    assert COUNT(client, [key], [1]) == 1

    # MIGRATING/IMPORTING, key moved: the source answers ASK for it.
    src, dst = source.client(), target.client()
    dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", cluster.node_id(source))
    src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", cluster.node_id(target))
    src.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", key)
    assert COUNT(client, [key], [1]) == 2  # ASKING + EVALSHA on the target (NOSCRIPT there)
    assert client.nodes_manager.get_node_from_slot(slot).port == source.port  # ASK: no update

    # Slot assigned: MOVED, and the client's slot map follows.
    for server in cluster.servers:
        server.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", cluster.node_id(target))
    assert COUNT(client, [key], [1]) == 3
    assert client.nodes_manager.get_node_from_slot(slot).port == target.port
    assert src.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0


def test_script_waits_out_tryagain_while_its_keys_are_split_by_a_migration(cluster):
    client = cluster.client()
    keys = ["{snowid-cluster-test}:a", "{snowid-cluster-test}:b"]
    both = RedisScript(
        "redis.call('INCR', KEYS[1]) return redis.call('INCR', KEYS[2])", safe_to_retry=True
    )
    assert both(client, keys) == 1
    slot = client.keyslot(keys[0])
    source = cluster.owner(slot)
    target = next(s for s in cluster.servers if s is not source)
    src = source.client()
    target.client().execute_command(
        "CLUSTER", "SETSLOT", slot, "IMPORTING", cluster.node_id(source)
    )
    src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", cluster.node_id(target))
    src.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", keys[0])
    # One key moved, the other not: the source answers TRYAGAIN until the rest moves.
    with pytest.raises(redis.exceptions.TryAgainError):
        src.evalsha(both.sha, 2, *keys)

    def finish() -> None:
        src.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", keys[1])
        # The target first, then the source (as Redis documents it): the other way round,
        # the source sends the call to a target that, still importing, sends it back, and
        # the script's redirections can run out before the target learns the slot is its.
        others = [s for s in cluster.servers if s not in (target, source)]
        for server in (target, source, *others):
            server.client().execute_command(
                "CLUSTER", "SETSLOT", slot, "NODE", cluster.node_id(target)
            )

    later = threading.Timer(0.3, finish)
    later.start()
    try:
        assert both(client, keys) == 2  # waited, then followed the keys to the target
    finally:
        later.join()
    assert int(target.client().execute_command("CLUSTER", "COUNTKEYSINSLOT", slot)) == 2


def _draw(migrated: Any, results: Any, process: int) -> None:
    try:  # keep drawing on the new owner for half a second
        values, after, errors = until_after(migrated, 0.5, lambda: next_value("customer"))
    finally:
        connections.close_all()
    results.put((process, values, after, errors))


@pytest.mark.django_db(transaction=True)
def test_sequences_from_four_processes_unique_across_a_slot_migration(cluster):
    connections.close_all()  # children must not share the parent's socket
    with override_settings(
        SNOWID_SEQUENCE_BACKEND="redis",
        SNOWID_REDIS_CLIENT_FACTORY="tests.redis_topologies.current_client",
        # Small raises: marks are raised (two-key scripts) during the migration too.
        SNOWID_SEQUENCE_MIN_STEP=50,
        SNOWID_SEQUENCE_MAX_STEP=200,
    ):
        assert redis_topologies.CURRENT is cluster
        key = get_store().key("customer")
        first = next_value("customer")
        slot, source, target, per_process = cluster.migrate_while_writing(
            key, _draw, PROCESSES, after=0.3
        )
    assert cluster.owner(slot) is target
    assert target.client().execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) >= 1
    assert source.client().execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    assert [errors for *_, errors in per_process] == [[]] * PROCESSES
    assert all(after > 0 for _, _, after, _ in per_process), "no draw after the migration"
    values = [first] + [v for _, vs, _, _ in per_process for v in vs]
    assert len(set(values)) == len(values), "a value was issued twice"
    for _, vs, _, _ in per_process:
        assert all(a < b for a, b in itertools.pairwise(vs)), "a process's values went down"
    assert max(values) <= read_marks()["customer"], "a value above the committed mark"


def _create_orders(migrated: Any, results: Any, process: int) -> None:
    def save() -> tuple[float, int]:
        return time.monotonic(), ShopOrder.objects.create(user_id=process).number

    try:  # keep saving on the new owner, which may first hold the stream up to a second
        # (see docs/redis.rst)
        numbers, after, errors = until_after(migrated, 1.5, save)
    finally:
        connections.close_all()
    results.put((process, numbers, after, errors))


@pytest.mark.django_db(transaction=True)
def test_orders_from_four_processes_unique_across_a_slot_migration(cluster, capsys):
    """The stream's slot moves (MIGRATING/IMPORTING, ASK, then MOVED) while four processes
    save orders through SNOWID_REDIS_CLIENT_FACTORY: every row saved, no number twice."""
    field = ShopOrder._meta.get_field("number")
    connections.close_all()  # children must not share the parent's socket
    with override_settings(
        SNOWID_ORDER_BACKEND="redis",
        SNOWID_REDIS_CLIENT_FACTORY="tests.redis_topologies.current_client",
    ):
        assert redis_topologies.CURRENT is cluster
        key = get_order_store().key(field.stream)  # type: ignore[attr-defined]
        first = ShopOrder.objects.create(user_id=99).number
        slot, source, target, per_process = cluster.migrate_while_writing(
            key, _create_orders, PROCESSES, after=0.3
        )
        state = get_order_store().read(field.stream)
    assert cluster.owner(slot) is target
    assert target.client().execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) >= 1
    assert source.client().execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    assert [errors for *_, errors in per_process] == [[]] * PROCESSES
    assert all(after > 0 for _, _, after, _ in per_process), "no order saved after the migration"
    numbers = [first] + [n for _, ns, _, _ in per_process for _, n in ns]
    assert len(set(numbers)) == len(numbers), "an order number was issued twice"
    # Each process has a shard of its own: the stream must not issue a position twice.
    positions = [field.format.position(n) for n in numbers]
    assert len(set(positions)) == len(positions), "a position of the stream was issued twice"
    for _, ns, _, _ in per_process:
        mine = [field.format.position(n) for _, n in ns]
        assert mine == sorted(mine), "a process's numbers went down"
    assert sorted(ShopOrder.objects.values_list("number", flat=True)) == sorted(numbers)
    # Past the largest number: numbers left in the processes' blocks are gaps.
    assert state >= field.format.position(max(numbers))
    pause = max(
        max(b - a for (a, _), (b, _) in itertools.pairwise(ns)) for _, ns, _, _ in per_process
    )
    with capsys.disabled():
        print(
            f"\nSlot migration (order numbers): longest pause of a writer {pause:.2f} s; "
            f"{len(numbers)} orders, no number or position twice"
        )
