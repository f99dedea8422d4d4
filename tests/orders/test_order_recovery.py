"""Order numbers under load while the store loses its state, in real processes.

8 processes save orders (in autocommit, inside transactions, in bulk_create blocks)
while a throwaway Redis is flushed and killed and restarted empty every 0.5 s, or while
``snowid_recover`` runs in a loop. Whatever happens: no (second, sequence) position is
issued twice, each process's numbers increase, no IntegrityError reaches the caller and
every save that returned is in the table.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import time
from collections import Counter
from collections.abc import Iterator
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
#: The fewest disruptions a load goes through: it runs on until they have all happened.
DISRUPTIONS = 4
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


class SteppedClock:
    """The ``time`` module of an app server whose clock steps back and forth: 0 to 3 s
    behind, a new step every 0.5 s, each process on a step of its own."""

    def __init__(self, process: int) -> None:
        self.process = process

    def time(self) -> float:
        real = time.time()
        return real - (self.process + int(real * 2)) % 4

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


_stop: Any = None  # set before the fork: the children inherit it, and save until it is set


def _worker(args: tuple[str, int]) -> dict[str, Any]:
    """Save until ``_stop`` is set; report every number given, and which ones were written."""
    mode, process = args
    if mode == "stepped":  # the database store on this app server's clock
        from django_snowid.orders.stores import database as stores

        stores.time = SteppedClock(process)  # type: ignore[assignment]
        mode = "atomic"
    issued: list[int] = []
    committed: list[int] = []
    retried = 0
    errors: list[str] = []
    serial = 0
    try:
        with connections["default"].execute_wrapper(_far_database):
            while not _stop.is_set():
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


def _disrupt(disaster: str, server: Any) -> None:
    """Flush and restart the throwaway Redis every 0.5 s (or run snowid_recover in a
    loop, with a flush every 0.5 s) for ``LOAD_S`` and at least ``DISRUPTIONS`` times."""
    count = 0
    until = time.time() + LOAD_S
    # "restart": a FLUSHALL and a restart every 0.5 s each, a quarter second apart.
    step = 0.25 if disaster == "restart" else 0.5
    next_at = time.time() + step
    while time.time() < until or count < DISRUPTIONS:
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
@pytest.mark.parametrize("concealed", [False, True], ids=["plain", "concealed"])
@pytest.mark.parametrize("disaster", ["restart", "recover"])
@pytest.mark.parametrize("mode", ["autocommit", "atomic", "bulk"])
def test_no_position_repeats_while_redis_loses_the_stream(
    throwaway_redis, mode, disaster, concealed
):
    """``restart``: FLUSHALL and a restart without persistence, by turns, every 0.5 s.
    ``recover``: ``snowid_recover`` in a loop, and a FLUSHALL every 0.5 s. Concealed
    numbers too: positions are their true ones."""
    connections.close_all()  # children must not share the parent's socket
    context = multiprocessing.get_context("fork")
    with override_settings(
        CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis", **_conceal(concealed)
    ):
        fmt = ShopOrder._meta.get_field("number").format
        assert fmt.conceal is concealed
        ShopOrder.objects.create(user_id=0)  # the stream exists before the load starts
        connections.close_all()
        with _load(context, mode) as pending:
            _disrupt(disaster, throwaway_redis)
        per_process = pending.get(timeout=120)
    ShopOrder.objects.filter(user_id=0).delete()
    assert sum(len(r["issued"]) for r in per_process) >= PROCESSES  # the load did run
    assert_never_repeated(per_process, fmt)


def _conceal(concealed: bool) -> dict[str, Any]:
    """The settings that conceal ShopOrder's numbers (or leave them plain)."""
    if not concealed:
        return {}
    return {"SNOWID_ORDER_CONCEAL": True, "SNOWID_ORDER_KEY": "order-recovery-test-key-" + "x" * 16}


@contextlib.contextmanager
def _load(context: Any, mode: str) -> Iterator[Any]:
    """``PROCESSES`` processes saving in ``mode`` until the block ends; the results'
    AsyncResult."""
    global _stop
    _stop = context.Event()
    pool = context.Pool(PROCESSES)
    try:
        pending = pool.map_async(_worker, [(mode, p) for p in range(PROCESSES)])
        yield pending
        _stop.set()
        pending.wait(120)
    finally:
        pool.terminate()
        pool.join()


def run_load(mode: str) -> list[dict[str, Any]]:
    connections.close_all()  # children must not share the parent's socket
    with _load(multiprocessing.get_context("fork"), mode) as pending:
        time.sleep(LOAD_S)
    return pending.get(timeout=0)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("concealed", [False, True], ids=["plain", "concealed"])
def test_database_store_with_clocks_stepping_back_inside_transactions(concealed):
    with override_settings(SNOWID_ORDER_BACKEND="database", **_conceal(concealed)):
        fmt = ShopOrder._meta.get_field("number").format
        per_process = run_load("stepped")
    assert sum(len(r["issued"]) for r in per_process) >= PROCESSES
    assert_never_repeated(per_process, fmt)


_barrier: Any = None  # set before the fork: the children inherit it


def _first_orders(process: int) -> list[int] | str:
    try:
        _barrier.wait(timeout=30)
        with transaction.atomic():
            numbers = [ShopOrder.objects.create(user_id=process * 10 + i).number for i in range(3)]
            time.sleep(0.05)  # the others pile up behind this transaction meanwhile
        return numbers
    except Exception as exc:  # reported to the parent, which fails the test
        return repr(exc)
    finally:
        connections.close_all()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_first_orders_of_a_new_stream_at_the_same_moment(backend, settings):
    """8 processes create a stream's first orders at once, each inside a transaction:
    creating the stream's state never deadlocks, every save succeeds."""
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        pytest.skip("SQLite runs one writing transaction at a time: contention is expected")
    global _barrier
    connections.close_all()
    context = multiprocessing.get_context("fork")
    _barrier = context.Barrier(PROCESSES)
    with context.Pool(PROCESSES) as pool:
        results = pool.map(_first_orders, range(PROCESSES))
    failed = [r for r in results if isinstance(r, str)]
    assert not failed, failed
    numbers = [n for r in results for n in r]
    assert len(set(numbers)) == 3 * PROCESSES
    assert set(ShopOrder.objects.values_list("number", flat=True)) == set(numbers)
