"""Order numbers under load while the store loses its state, in real processes.

8 processes save orders (in autocommit, inside transactions, in bulk_create blocks)
while a throwaway Redis is flushed and killed and restarted empty every 0.5 s, or while
``snowid_recover`` runs in a loop. Whatever happens: no (second, sequence) position is
issued twice, each process's numbers increase, no IntegrityError reaches the caller and
every save that returned is in the table.
"""

from __future__ import annotations

import multiprocessing
import time
from collections import Counter
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connections, transaction
from django.test import override_settings

from django_snowid.exceptions import OrderNumberUnavailable, OrderTransactionConflict
from tests.testapp.models import ShopOrder

PROCESSES = 8
LOAD_S = 2.5
#: What a caller is told to retry: the store was down for a moment, or the database
#: chose its transaction as a deadlock victim. Nothing was written either way.
RETRY = (OrderNumberUnavailable, OrderTransactionConflict)


def _far_database(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
    """A database 5 ms away for writes (on another host): every INSERT spends that long
    on its way, with its number already drawn."""
    if sql.lstrip().upper().startswith("INSERT"):
        time.sleep(0.005)
    return execute(sql, params, many, context)


def _save(mode: str, process: int, serial: int) -> list[int]:
    """One unit of work: the numbers it was given, in the order it got them."""
    user = process * 100_000 + serial
    if mode == "autocommit":
        return [ShopOrder.objects.create(user_id=user).number]
    if mode == "atomic":
        numbers: list[int] = []
        with transaction.atomic():
            for i in range(4):
                numbers.append(ShopOrder.objects.create(user_id=user + i).number)
                time.sleep(0.002)  # a transaction that does some work between its saves
        return numbers
    objs = ShopOrder.objects.bulk_create([ShopOrder(user_id=user + i) for i in range(40)])
    return [o.number for o in objs]


def _worker(args: tuple[str, int, float]) -> dict[str, Any]:
    """Save until the deadline; report every number given, and which ones were written."""
    mode, process, deadline = args
    issued: list[int] = []
    committed: list[int] = []
    retried = 0
    errors: list[str] = []
    serial = 0
    try:
        with connections["default"].execute_wrapper(_far_database):
            while time.time() < deadline:
                serial += 100
                try:
                    numbers = _save(mode, process, serial)
                except RETRY:
                    retried += 1
                    time.sleep(0.01)
                    continue
                except Exception as exc:  # reported to the parent, which fails the test
                    errors.append(repr(exc))
                    continue
                issued.extend(numbers)
                committed.extend(numbers)
    finally:
        connections.close_all()
    return {"issued": issued, "committed": committed, "retried": retried, "errors": errors}


def _disrupt(disaster: str, server: Any, until: float) -> int:
    """Flush and restart the throwaway Redis every 0.5 s (or run snowid_recover in a
    loop, with a flush every 0.5 s) until ``until``; returns how many times."""
    count = 0
    # "restart": a FLUSHALL and a restart every 0.5 s each, a quarter second apart.
    step = 0.25 if disaster == "restart" else 0.5
    next_at = time.time() + step
    while time.time() < until:
        if disaster == "recover":
            call_command("snowid_recover", "testapp.ShopOrder", stdout=StringIO())
        if time.time() >= next_at:
            if disaster == "restart" and count % 2:
                server.restart()
            else:
                server.client().flushall()
            count += 1
            next_at += step
        time.sleep(0.01 if disaster == "recover" else 0.02)
    return count


def assert_never_repeated(per_process: list[dict[str, Any]], fmt: Any) -> None:
    issued = [n for r in per_process for n in r["issued"]]
    positions = Counter(fmt.position(n) for n in issued)
    repeated = {p: c for p, c in positions.items() if c > 1}
    assert not repeated, f"{len(repeated)} positions issued twice: {list(repeated)[:5]}"
    went_down = [
        index
        for index, result in enumerate(per_process)
        if [fmt.position(n) for n in result["issued"]]
        != sorted(fmt.position(n) for n in result["issued"])
    ]
    assert not went_down, f"the numbers of processes {went_down} went down"
    errors = [e for r in per_process for e in r["errors"]]
    assert not errors, errors[:5]
    committed = {n for r in per_process for n in r["committed"]}
    stored = set(ShopOrder.objects.values_list("number", flat=True))
    assert stored == committed, "a saved order is missing, or an unsaved one was written"


@pytest.mark.slow
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("disaster", ["restart", "recover"])
@pytest.mark.parametrize("mode", ["autocommit", "atomic", "bulk"])
def test_no_position_repeats_while_redis_loses_the_stream(throwaway_redis, mode, disaster):
    """``restart``: FLUSHALL and a restart without persistence, by turns, every 0.5 s.
    ``recover``: ``snowid_recover`` in a loop, and a FLUSHALL every 0.5 s."""
    connections.close_all()  # children must not share the parent's socket
    context = multiprocessing.get_context("fork")
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis"):
        ShopOrder.objects.create(user_id=0)  # the stream exists before the load starts
        connections.close_all()
        deadline = time.time() + LOAD_S
        with context.Pool(PROCESSES) as pool:
            pending = pool.map_async(_worker, [(mode, p, deadline) for p in range(PROCESSES)])
            disruptions = _disrupt(disaster, throwaway_redis, deadline)
            per_process = pending.get(timeout=120)
    ShopOrder.objects.filter(user_id=0).delete()
    assert disruptions >= 3
    assert sum(len(r["issued"]) for r in per_process) >= PROCESSES  # the load did run
    assert_never_repeated(per_process, ShopOrder._meta.get_field("number").format)
