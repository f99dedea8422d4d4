"""Which scripts the runner sends again once they may have run.

Every ``RedisScript`` declares ``safe_to_retry``. Each script declared safe runs twice
here with the same arguments, as a retry after a lost reply runs it, on the shared Redis
(keys of the test's own prefix): the second run may leave a gap, never hand out what the
first did. The runner sends a script not declared safe only once the connection may have
carried it (a proxy cuts the connection when it passes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import redis
from django.conf import settings

from django_snowid.orders.stores import ORDERS
from django_snowid.orders.stores import redis as orders
from django_snowid.sequences.stores import redis as sequences
from django_snowid.stores import redis_scripts
from django_snowid.stores.redis_scripts import RedisCalls, RedisScript, server_id
from django_snowid.workers.stores import redis as workers
from tests.order_cases import NOW, picked, script_argv
from tests.order_transitions import handed_out
from tests.support import DroppingProxy

pytestmark = pytest.mark.redis

MODULES = {"orders": orders, "workers": workers, "sequences": sequences, "stores": redis_scripts}
SCRIPTS = {
    f"{label}.{name}": script
    for label, module in MODULES.items()
    for name, script in vars(module).items()
    if isinstance(script, RedisScript)
}


@pytest.fixture
def client() -> Any:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=3)


def _key(name: str) -> str:
    return f"{{{settings.SNOWID_REDIS_KEY_PREFIX}:retry}}:{name}"


def _stream(client: Any) -> str:
    key = _key("stream")
    client.hset(key, mapping={"sec": NOW, "seq": 0, "rid": server_id(client, key)})
    return key


def _reservations(script: RedisScript[Any], read: Callable[[Any], Any]) -> Callable[[Any], None]:
    def twice(client: Any) -> None:
        key = _stream(client)
        argv = script_argv(picked(0, 0) | {"cap": 100, "count": 3})
        first = list(handed_out(read(script(client, [key], argv))))
        again = list(handed_out(read(script(client, [key], argv))))
        assert first and again and min(again) > max(first)

    return twice


def _recover(client: Any) -> None:
    key = _stream(client)
    forced = (1, NOW, 5, 0, 1, 1, 0, NOW)  # the database at (NOW, 5), forced, on clock NOW
    first = orders.RECOVER(client, [key], forced)
    again = orders.RECOVER(client, [key], forced)
    assert first[3:] == again[3:] == [NOW + 1, 0]  # the state reached, and kept
    assert client.hmget(key, ["sec", "seq"]) == [str(NOW + 1).encode(), b"0"]


# ACQUIRE's and RENEW's arguments (their comment in workers/stores/redis.py), no grace.
_LEASE = (4, 60_000, "token", "owner", 0, 0, "default", 1_000)
_OTHER = (4, 60_000, "other-token", "other", 0, 0, "default", 1_000)


def _acquire(client: Any) -> None:
    pool = _key("pool")
    first, _ = workers.ACQUIRE(client, [pool], _LEASE)
    again, _ = workers.ACQUIRE(client, [pool], _LEASE)
    other, _ = workers.ACQUIRE(client, [pool], _OTHER)
    assert len({first, again, other}) == 3  # the first id stays ours until its TTL: a gap


def _settle(client: Any) -> None:
    pool = _key("pool")
    first = workers.SETTLE(client, [pool], [60_000])
    again = workers.SETTLE(client, [pool], [60_000])
    assert first[1] == again[1]  # one wait, started once


def _renew(client: Any) -> None:
    pool = _key("pool")
    held, _ = workers.ACQUIRE(client, [pool], _LEASE)
    renewal = (held, "token", 60_000, 2_000, "owner", "default", 0)
    assert [workers.RENEW(client, [pool], renewal) for _ in "12"] == [1, 1]
    assert int(client.hget(pool, f"until:{held}")) == 2_000
    other, _ = workers.ACQUIRE(client, [pool], _OTHER)
    assert other != held  # still ours
    release = (held, "token", 0, 1_500, "owner", "default", 0)
    assert [workers.RENEW(client, [pool], release) for _ in "12"] == [1, 2]  # 2: gone


def _sequence(client: Any) -> str:
    key = _key("sequence")
    client.hset(key, mapping={"cur": 10, "max": 100, "rid": server_id(client, key)})
    return key


def _draw(client: Any) -> None:
    key = _sequence(client)
    first = sequences.DRAW(client, [key], [5, NOW, 60])
    again = sequences.DRAW(client, [key], [5, NOW, 60])
    assert (first.first, again.first) == (11, 16)  # 11..15, then 16..20


def _publish(client: Any) -> None:
    key, lock = _sequence(client), _key("sequence:raise")
    client.set(lock, "token")
    assert sequences.PUBLISH(client, [key, lock], ["token", 100, 150, 50]) is True
    sequences.DRAW(client, [key], [5, NOW, 60])  # values drawn under the new mark
    assert sequences.PUBLISH(client, [key, lock], ["token", 100, 150, 50]) is False
    assert client.hmget(key, ["cur", "max"]) == [b"15", b"150"]  # nothing lowered


def _lock(client: Any) -> None:
    key, lock = _sequence(client), _key("sequence:raise")
    first = sequences.ACQUIRE(client, [key, lock], ["token", 60_000])
    again = sequences.ACQUIRE(client, [key, lock], ["token", 60_000])
    assert first.token is not None and again.token is None  # held (by us, until it expires)
    assert client.get(lock).decode() == first.token
    releases = [sequences.RELEASE(client, [lock], [first.token]) for _ in "12"]
    assert releases == [1, 0]


def _who(client: Any) -> None:
    first = redis_scripts._WHO(client, [_key("who")])
    assert redis_scripts._WHO(client, [_key("who")]) == first


#: Each script declared safe, run twice with the same arguments.
RUN_TWICE: dict[str, Callable[[Any], None]] = {
    "orders.RESERVE": _reservations(orders.RESERVE, orders.reserve_outcome),
    "orders.RESERVE_BLOCK": _reservations(orders.RESERVE_BLOCK, orders.block_outcome),
    "orders.RECOVER": _recover,
    "workers.ACQUIRE": _acquire,
    "workers.SETTLE": _settle,
    "workers.RENEW": _renew,
    "sequences.DRAW": _draw,
    "sequences.PUBLISH": _publish,
    "sequences.ACQUIRE": _lock,
    "sequences.RELEASE": _lock,
    "stores._WHO": _who,
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_declared_safe_run_twice_leaves_a_gap_never_a_repeat(name, client):
    script = SCRIPTS[name]
    assert isinstance(script.safe_to_retry, bool)
    if not script.safe_to_retry:
        pytest.skip("not declared safe: never sent again once it may have run")
    assert name in RUN_TWICE, f"{name} is declared safe_to_retry: add its run-twice case here"
    RUN_TWICE[name](client)


def test_every_script_is_found():
    assert set(RUN_TWICE) <= set(SCRIPTS)
    assert len(SCRIPTS) >= 10


INCREMENT = "return redis.call('HINCRBY', KEYS[1], 'n', 1)"


@pytest.mark.parametrize("safe", [False, True], ids=["undeclared", "declared-safe"])
def test_only_a_script_declared_safe_is_sent_again_after_a_lost_connection(
    safe, settings, throwaway_redis
):
    """The proxy cuts the connection when EVALSHA passes (as a network that fails
    between the request and its reply): a script not declared safe is refused at once,
    one attempt; a script declared safe is sent again on a new connection."""
    script = RedisScript(INCREMENT, safe_to_retry=safe)
    with DroppingProxy(throwaway_redis.port, b"\r\nEVALSHA\r\n", times=1) as proxy:
        settings.CACHES = proxy.caches()
        calls = RedisCalls(ORDERS.errors)
        if safe:
            assert calls.run(script, ["{retry}:n"]) == 1
        else:
            with pytest.raises(ORDERS.errors.unavailable, match="not declared safe to run"):
                calls.run(script, ["{retry}:n"])
        assert proxy.dropped == 1
    assert throwaway_redis.client().hget("{retry}:n", "n") == (b"1" if safe else None)
