"""One sequence, one database mark, and the store in front of it changing: another Redis
server, another key prefix, the database backend and back; and a drawing process killed
with SIGKILL. Processes draw in phases (the last one with both stores at once); no value
may be issued twice."""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import pytest
from django.db import connections
from django.test import override_settings

from django_snowid.db.connections import close_own_connections
from django_snowid.sequences import next_value, next_values
from django_snowid.sequences.stores.database import read_marks
from tests.redis_topologies import Writers
from tests.support import Children

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Each draw is a block larger than a raise (10 values): a store uses up its headroom in
# a few draws, whatever it raised ahead, and has to raise the mark again and again.
BLOCKS, BLOCK = 6, 25


def _draw(overrides: dict[str, Any], _event: Any, results: Any, n: int) -> None:
    try:
        with override_settings(**overrides):
            drawn = [next_value("customer")]
            for _ in range(BLOCKS):
                drawn += next_values("customer", BLOCK)
            results.put(drawn)
    except Exception as exc:
        results.put(repr(exc))
    finally:
        connections.close_all()


def _phase(*stores: dict[str, Any]) -> list[int]:
    """One process per store in ``stores``, all drawing at once; every value drawn."""
    connections.close_all()
    close_own_connections()
    drawn: list[int] = []
    with contextlib.ExitStack() as stack:
        # One group a store: each process draws under the settings of its own store.
        groups = [
            stack.enter_context(Writers(functools.partial(_draw, overrides), 1))
            for overrides in stores
        ]
        for group in groups:
            (values,) = group.results()
            assert isinstance(values, list), values
            drawn += values
    return drawn


def _check(drawn: list[int]) -> None:
    twice = len(drawn) - len(set(drawn))
    assert not twice, f"{twice} values issued twice"
    assert max(drawn) <= read_marks()["customer"], "a value above the committed mark"


@pytest.fixture
def steps(settings):
    settings.SNOWID_SEQUENCE_MIN_STEP = 10
    settings.SNOWID_SEQUENCE_MAX_STEP = 10


def test_two_redis_servers_over_one_database(steps, throwaway_redis, second_redis):
    a = {"SNOWID_SEQUENCE_BACKEND": "redis", "CACHES": throwaway_redis.caches()}
    b = {"SNOWID_SEQUENCE_BACKEND": "redis", "CACHES": second_redis.caches()}
    drawn = _phase(a, a) + _phase(b, b) + _phase(a, a) + _phase(a, b)
    _check(drawn)


def test_a_key_prefix_change(steps, settings, throwaway_redis):
    old = {
        "SNOWID_SEQUENCE_BACKEND": "redis",
        "CACHES": throwaway_redis.caches(),
        "SNOWID_REDIS_KEY_PREFIX": "shop",
    }
    new = {**old, "SNOWID_REDIS_KEY_PREFIX": "shop-v2"}
    drawn = _phase(old, old) + _phase(new, new) + _phase(old, old) + _phase(old, new)
    _check(drawn)


def test_a_backend_switch_redis_database_redis(steps, throwaway_redis):
    redis = {"SNOWID_SEQUENCE_BACKEND": "redis", "CACHES": throwaway_redis.caches()}
    database = {"SNOWID_SEQUENCE_BACKEND": "database"}
    drawn = _phase(redis, redis) + _phase(database, database) + _phase(redis, redis)
    drawn += _phase(redis, database)
    _check(drawn)


def _draw_until_killed(overrides: dict[str, Any], path: str, ready: Any) -> None:
    with override_settings(**overrides), open(path, "a") as file:
        while True:  # until SIGKILL; each value reaches the file before the next is drawn
            file.write(f"{next_value('customer')}\n")
            file.flush()
            ready.set()


@pytest.mark.parametrize("backend", ["redis", "database"])
def test_a_process_killed_while_drawing(steps, throwaway_redis, tmp_path, backend):
    store = {"SNOWID_SEQUENCE_BACKEND": backend, "CACHES": throwaway_redis.caches()}
    close_own_connections()
    path = str(tmp_path / "drawn")
    with Children() as children:
        children.kill_when_running(_draw_until_killed, store, path, after_s=0.3)
    with open(path) as file:
        drawn = [int(line) for line in file if line.strip()]
    _check(drawn + _phase(store, store))
