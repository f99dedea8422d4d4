"""A failover must not reissue: a replica that lagged, promoted; and real failovers (SIGKILL
of the primary) under four writing processes, behind Sentinel and on a Redis Cluster whose
primary of the key's slot dies and whose replica the cluster promotes. Named sequences and
order numbers."""

from __future__ import annotations

import functools
import itertools
import multiprocessing
import time
from typing import Any

import pytest
from django.db import IntegrityError, connections
from django.test import override_settings

from django_snowid.exceptions import OrderNumberUnavailable, SequenceUnavailable
from django_snowid.orders.stores import get_store as get_order_store
from django_snowid.sequences import next_value, next_values
from django_snowid.sequences.stores import get_store as get_sequence_store
from django_snowid.sequences.stores.database import read_marks
from tests.redis_topologies import FAILOVERS, Writers, failover_topology
from tests.support import set_order_state
from tests.testapp.models import ShopOrder

pytestmark = pytest.mark.redis
PROCESSES = 4


@pytest.fixture
def replica(second_redis):
    return second_redis


@pytest.mark.django_db(transaction=True)
def test_a_promoted_replica_that_lagged_resumes_above_every_value_issued(
    settings, throwaway_redis, replica
):
    """The replica holds the sequence as it was 5 values in; the primary went on to 30.
    After the switch, the store must not draw 6, 7, ... again."""
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    settings.SNOWID_SEQUENCE_MIN_STEP = 1000  # one raise covers the whole test
    settings.CACHES = throwaway_redis.caches()
    issued = [next_value("customer") for _ in range(5)]
    key = f"{{{settings.SNOWID_REDIS_KEY_PREFIX}:seq:customer}}"
    primary = throwaway_redis.client()
    replica.client().restore(key, 0, primary.dump(key))  # what the replica received
    issued += list(next_values("customer", 25))
    assert issued == list(range(1, 31))

    settings.CACHES = replica.caches()  # the failover: the replica is the primary now
    after = [next_value("customer") for _ in range(5)] + list(next_values("customer", 5))
    assert min(after) > max(issued), f"reissued {sorted(set(after) & set(issued))}"
    assert max(after) <= read_marks()["customer"]
    # Once re-synced, the new primary's state is its own: no further jump.
    assert after == list(range(after[0], after[0] + 10))


def _write(stop: Any, results: Any, process: int) -> None:
    values: list[tuple[float, int]] = []
    documented = 0
    others: list[str] = []
    try:
        while not stop.is_set():
            try:
                values.append((time.monotonic(), next_value("customer")))
            except SequenceUnavailable:
                documented += 1  # the failover window: retried by the caller
                time.sleep(0.02)
            except Exception as exc:
                others.append(repr(exc))
                time.sleep(0.02)
    finally:
        connections.close_all()
        results.put((process, values, documented, others))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", FAILOVERS)
def test_failover_under_four_writers_reissues_nothing(tmp_path, capsys, kind):
    with failover_topology(kind, str(tmp_path)) as (topology_settings, kill):
        connections.close_all()
        with override_settings(
            **topology_settings,
            SNOWID_SEQUENCE_BACKEND="redis",
            SNOWID_SEQUENCE_MIN_STEP=50,
            SNOWID_SEQUENCE_MAX_STEP=200,
        ):
            key = get_sequence_store().key("customer")  # type: ignore[attr-defined]
            with Writers(_write, PROCESSES) as writers:
                time.sleep(0.8)
                killed_at, promoted_at = kill(key)
                time.sleep(1.0)  # writers continue on the new primary
                writers.event.set()  # stop
                per_process = writers.results()
            mark = read_marks()["customer"]
    assert [others for *_, others in per_process] == [[]] * PROCESSES
    values = [v for _, vs, _, _ in per_process for _, v in vs]
    assert len(set(values)) == len(values), "a value was issued twice"
    for _, vs, _, _ in per_process:
        assert all(a < b for (_, a), (_, b) in itertools.pairwise(vs)), "values went down"
        assert any(t > promoted_at for t, _ in vs), "a writer never drew after the promotion"
    assert max(values) <= mark, "a value above the committed mark"
    pause = max(
        max(b - a for (a, _), (b, _) in itertools.pairwise(vs)) for _, vs, _, _ in per_process
    )
    with capsys.disabled():
        print(
            f"\n{kind} failover (sequences): promotion {promoted_at - killed_at:.2f} s after "
            "SIGKILL; "
            f"longest pause of a writer {pause:.2f} s; "
            f"{sum(d for _, _, d, _ in per_process)} SequenceUnavailable retried; "
            f"{len(values)} values, none twice"
        )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("saved", [8, 0], ids=["8-saved-2-in-flight", "all-in-flight"])
def test_a_promoted_replica_that_lagged_reissues_no_order_number(
    settings, throwaway_redis, replica, saved
):
    """The stream runs 20 s ahead of the clock (as after the clock of Redis stepped back),
    so the new primary's clock cannot carry it past what was issued. The replica holds the
    stream 5 numbers in; the primary went on to 10, the first ``saved`` of them saved,
    the others still on their way to the database. After the switch none comes back."""
    settings.SNOWID_ORDER_BACKEND = "redis"
    settings.SNOWID_ORDER_MAX_BACKWARDS_S = 60
    settings.CACHES = throwaway_redis.caches()
    field = ShopOrder._meta.get_field("number")
    fmt = field.format
    now = time.time()
    ahead = int(now) + fmt.utc_offset_at(now) + 20
    set_order_state(field.stream, (ahead, 0))

    def draw(i: int) -> int:
        if i < saved:
            return ShopOrder.objects.create(user_id=3).number
        return field.issuer().next_number(3)  # drawn, not saved (yet)

    issued = [draw(i) for i in range(5)]
    key = get_order_store().key(field.stream)  # type: ignore[attr-defined]
    primary = throwaway_redis.client()
    replica.client().restore(key, 0, primary.dump(key))  # what the replica received
    issued += [draw(i) for i in range(5, 10)]
    assert [fmt.position(n) for n in issued] == [(ahead, q) for q in range(1, 11)]

    settings.CACHES = replica.caches()  # the failover: the replica is the primary now
    after = [field.issuer().next_number(3) for _ in range(5)]
    after += [ShopOrder.objects.create(user_id=3).number for _ in range(5)]
    assert not set(after) & set(issued), "an order number was issued again"
    positions = [fmt.position(n) for n in after]
    # Re-synced once, past the stale state's second and the database's largest number;
    # then the new primary's state is its own: no further jump.
    assert positions == [(ahead + 1, q) for q in range(1, 11)]
    assert ShopOrder.objects.count() == saved + 5


def _create_orders(saved: Any, stop: Any, results: Any, process: int) -> None:
    numbers: list[tuple[float, int]] = []
    unavailable = 0
    conflicts: list[str] = []
    others: list[str] = []
    try:
        while not stop.is_set():
            try:
                order = ShopOrder.objects.create(user_id=process)
                numbers.append((time.monotonic(), order.number))
                saved[process] += 1
            except OrderNumberUnavailable:
                unavailable += 1  # the failover window: retried by the caller
                time.sleep(0.02)
            except IntegrityError as exc:
                conflicts.append(repr(exc))
            except Exception as exc:
                others.append(repr(exc))
                time.sleep(0.02)
    finally:
        connections.close_all()
        results.put((process, numbers, unavailable, conflicts, others))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", FAILOVERS)
def test_failover_under_four_order_writers_reissues_nothing(tmp_path, capsys, kind):
    field = ShopOrder._meta.get_field("number")
    fmt = field.format
    # Orders each writer saved so far: the primary dies once every writer is saving.
    saved = multiprocessing.get_context("fork").Array("i", PROCESSES, lock=False)
    with failover_topology(kind, str(tmp_path)) as (topology_settings, kill):
        connections.close_all()
        with (
            override_settings(**topology_settings, SNOWID_ORDER_BACKEND="redis"),
            Writers(functools.partial(_create_orders, saved), PROCESSES) as writers,
        ):
            key = get_order_store().key(field.stream)  # type: ignore[attr-defined]
            deadline = time.monotonic() + 30
            while not all(saved):
                assert time.monotonic() < deadline, "the writers did not start within 30 s"
                time.sleep(0.05)
            time.sleep(0.5)
            killed_at, promoted_at = kill(key)
            time.sleep(1.5)  # writers continue on the new primary
            writers.event.set()  # stop
            per_process = writers.results()
    assert [others for *_, others in per_process] == [[]] * PROCESSES
    assert [conflicts for *_, conflicts, _ in per_process] == [[]] * PROCESSES
    numbers = [n for _, ns, *_ in per_process for _, n in ns]
    assert len(set(numbers)) == len(numbers), "an order number was issued twice"
    # Each writer has a shard of its own: a position issued twice would still make
    # different numbers. The stream issues each position once.
    positions = [fmt.position(n) for n in numbers]
    assert len(set(positions)) == len(positions), "a position of the stream was issued twice"
    for _, ns, *_ in per_process:
        mine = [fmt.position(n) for _, n in ns]
        assert mine == sorted(mine), "a writer's numbers went down"
        assert any(t < killed_at for t, _ in ns) and any(t > promoted_at for t, _ in ns)
    assert sorted(ShopOrder.objects.values_list("number", flat=True)) == sorted(numbers)
    # Every writer saved before the kill: its longest pause spans the failover.
    pause = max(
        max(b - a for (a, _), (b, _) in itertools.pairwise(ns)) for _, ns, *_ in per_process
    )
    with capsys.disabled():
        print(
            f"\n{kind} failover (order numbers): promotion {promoted_at - killed_at:.2f} s "
            f"after SIGKILL; longest pause of a writer {pause:.2f} s; "
            f"{sum(u for _, _, u, _, _ in per_process)} OrderNumberUnavailable retried; "
            f"{len(numbers)} orders, no number or position twice"
        )
