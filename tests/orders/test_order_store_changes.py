"""One order-number stream whose store changes between processes: another Redis server, a
key-prefix change, the database backend and back; and a saving process killed with
SIGKILL. Processes save orders in phases, one right after the other; no (second,
sequence) position of the stream may be issued twice.

Each process saves with a shard of its own, so a position issued twice makes two
different numbers and both rows are saved: the test sees the repeat itself, not the
UNIQUE constraint's retry that would hide it for numbers of one shard.
"""

from __future__ import annotations

import contextlib
import functools
import time
from typing import Any

import pytest
from django.db import connections
from django.test import override_settings

from tests.redis_topologies import Writers
from tests.support import Children
from tests.testapp.models import ShopOrder

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PER_PROCESS = 20


def _save(
    overrides: dict[str, Any], shard: int, seconds: float, _event: Any, results: Any, n: int
) -> None:
    """Save orders: ``PER_PROCESS`` of them, or for ``seconds`` (across a second's end)."""
    numbers: list[int] = []
    try:
        with override_settings(**overrides):
            deadline = time.monotonic() + seconds
            while len(numbers) < PER_PROCESS or time.monotonic() < deadline:
                numbers.append(ShopOrder.objects.create(user_id=shard).number)
        results.put(numbers)
    except Exception as exc:
        results.put(repr(exc))
    finally:
        connections.close_all()


class Phases:
    """Phases of processes saving orders; each process of the whole run has its own shard."""

    def __init__(self) -> None:
        self.numbers: list[int] = []
        self.shards = iter(range(16))

    def run(self, *stores: dict[str, Any], seconds: float = 0) -> None:
        """One process per store in ``stores``, all saving at once."""
        connections.close_all()
        with contextlib.ExitStack() as stack:
            groups = [
                stack.enter_context(
                    Writers(functools.partial(_save, overrides, next(self.shards), seconds), 1)
                )
                for overrides in stores
            ]
            for group in groups:
                (numbers,) = group.results()
                assert isinstance(numbers, list), numbers
                self.numbers += numbers

    def check(self) -> None:
        fmt = ShopOrder._meta.get_field("number").format
        positions = [fmt.position(n) for n in self.numbers]
        twice = len(positions) - len(set(positions))
        assert not twice, f"{twice} positions of the stream issued twice"
        assert sorted(ShopOrder.objects.values_list("number", flat=True)) == sorted(self.numbers)


def test_two_redis_servers_one_after_the_other(throwaway_redis, second_redis):
    a = {"SNOWID_ORDER_BACKEND": "redis", "CACHES": throwaway_redis.caches()}
    b = {"SNOWID_ORDER_BACKEND": "redis", "CACHES": second_redis.caches()}
    phases = Phases()
    for stores in [(a, a), (b, b), (a, a), (b, b)]:
        phases.run(*stores)
    phases.check()


def test_a_key_prefix_change_and_back(throwaway_redis):
    old = {
        "SNOWID_ORDER_BACKEND": "redis",
        "CACHES": throwaway_redis.caches(),
        "SNOWID_REDIS_KEY_PREFIX": "shop",
    }
    new = {**old, "SNOWID_REDIS_KEY_PREFIX": "shop-v2"}
    phases = Phases()
    for stores in [(old, old), (new, new), (old, old), (new, new)]:
        phases.run(*stores)
    phases.check()


def test_backend_switches_database_redis_database_redis(throwaway_redis):
    redis = {"SNOWID_ORDER_BACKEND": "redis", "CACHES": throwaway_redis.caches()}
    database = {"SNOWID_ORDER_BACKEND": "database"}
    phases = Phases()
    # The database store continues a row that is ahead of the clock, and Redis one that
    # it holds: a phase saves across the end of a second, so that the next one starts in
    # a second that its store's old state is behind.
    for stores in [(database, database), (redis, redis), (database, database), (redis, redis)]:
        phases.run(*stores, seconds=1.2)
    phases.check()


def _save_until_killed(overrides: dict[str, Any], ready: Any) -> None:
    with override_settings(**overrides):
        while True:  # until SIGKILL
            ShopOrder.objects.create(user_id=15)
            ready.set()


@pytest.mark.parametrize("backend", ["redis", "database"])
def test_a_process_killed_while_saving(throwaway_redis, backend):
    store = {"SNOWID_ORDER_BACKEND": backend, "CACHES": throwaway_redis.caches()}
    with Children() as children:
        children.kill_when_running(_save_until_killed, store, after_s=0.3)
    phases = Phases()
    phases.run(store, store)
    # Every row, the killed process's included: no position twice.
    phases.numbers = list(ShopOrder.objects.values_list("number", flat=True))
    phases.check()
