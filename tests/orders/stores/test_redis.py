"""The Lua scripts of the Redis order store and the pure core agree, state by state.

Each script takes the clock as optional arguments, so the same states and times go
through the script on the shared Redis (keys of the test's own prefix) and through
``core.order_stream.reserve``/``resume``; the outcome and the state left behind must match.
A state is stamped with the ``run_id`` of the server that wrote it; one stamped by
another server is unverified (``resume(..., unverified=True)``).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import redis
from django.conf import settings
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from django_snowid.core.order_keys import KeyRecord, KeyWindow
from django_snowid.core.order_stream import reserve, reserve_block, resume
from django_snowid.orders.stores.base import MISSING
from django_snowid.orders.stores.redis import (
    RECOVER,
    RESERVE,
    RESERVE_BLOCK,
    block_outcome,
    reserve_outcome,
)
from django_snowid.stores.redis_scripts import server_id
from tests.order_cases import (
    NOW,
    core_keyed,
    core_reserve,
    keyed_reservations,
    offsets,
    picked,
    reservations,
    script_argv,
)

pytestmark = pytest.mark.redis

property_settings = hypothesis_settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@pytest.fixture
def client() -> Any:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=3)


def _key() -> str:
    return f"{{{settings.SNOWID_REDIS_KEY_PREFIX}:order:property}}"


def _set_state(client: Any, state: tuple[int, int] | None, rid: str | None = None) -> str:
    """Write ``state``, stamped by this server (or by the server ``rid``)."""
    key = _key()
    client.delete(key)
    if state is not None:
        rid = rid or server_id(client, key)
        client.hset(key, mapping={"sec": state[0], "seq": state[1], "rid": rid})
    return key


def _state(client: Any, key: str) -> tuple[int, int] | None:
    second, sequence = client.hmget(key, ["sec", "seq"])
    return None if second is None else (int(second), int(sequence))


@property_settings
@given(case=reservations())
@example(case=picked(1, 10))  # clock a full second behind, that second full: the next one
@example(case=picked(3, 10, offset=-5 * 3600))  # the same, three seconds, UTC-5
@example(case=picked(0, 10, offset=19_800))  # the current second full (UTC+5:30): wait
@example(case=picked(5, 10))  # full at the bound: nothing, wait for the clock
@example(case=picked(9, 2))  # beyond the bound: the clock is behind
@example(case=picked(-2, 7, first_sequence=4))  # a new second, random start
def test_reserve_script_agrees_with_core(client, case):
    key = _set_state(client, case["last"])
    reply = RESERVE(client, (key,), script_argv(case))
    state, outcome = core_reserve(case)
    assert (reserve_outcome(reply), _state(client, key)) == (outcome, state)


def _set_record(client: Any, key: str, record: KeyRecord) -> None:
    if record.key_id:
        fields = {"kid": record.key_id, "knext": record.next_id, "kfrom": record.next_from}
        client.hset(key, mapping=fields)


def _record(client: Any, key: str) -> KeyRecord:
    kid, knext, kfrom = client.hmget(key, ["kid", "knext", "kfrom"])
    return KeyRecord((kid or b"").decode(), (knext or b"").decode(), int(kfrom or 0))


@property_settings
@given(case=keyed_reservations(), block=st.booleans())
@example(  # an announced key takes over at its second: the old key is refused
    case=picked(-1, 0)
    | {"record": KeyRecord("0123456789abcdef", "fedcba9876543210", NOW - 1)}
    | {"window": KeyWindow("0123456789abcdef", -(2**62))},
    block=False,
)
def test_the_scripts_agree_with_core_on_keys(client, case, block):
    """RESERVE and RESERVE_BLOCK with a key window: the outcome, the state and the key
    record left behind are core's (``order_stream.keyed`` of ``order_keys.agree``)."""
    key = _set_state(client, case["last"])
    _set_record(client, key, case["record"])
    script, read, step = (
        (RESERVE_BLOCK, block_outcome, reserve_block)
        if block
        else (RESERVE, reserve_outcome, reserve)
    )
    reply = script(client, (key,), script_argv(case, case["window"]))
    state, record, outcome = core_keyed(case, step)
    assert (read(reply), _state(client, key), _record(client, key)) == (outcome, state, record)


def test_a_state_another_server_wrote_loses_its_key_record(client):
    """A failover's replica may hold a record older than the stream's seconds: recovered,
    the stream records the key of its first reservation after."""
    key = _set_state(client, (NOW, 5), rid="another-server")
    _set_record(client, key, KeyRecord("0123456789abcdef", "fedcba9876543210", NOW + 9))
    RECOVER(client, (key,), (0, 0, 0, 0, 1, 0, 0, NOW))
    assert _record(client, key) == KeyRecord()
    window = KeyWindow("fedcba9876543210", NOW - 100)
    case = picked(0, 0) | {"unix": NOW + 2, "micros": 0}
    reply = RESERVE(client, (key,), script_argv(case, window))
    assert reply[0] == 1 and _record(client, key) == KeyRecord("fedcba9876543210")


@property_settings
@given(
    unix=st.integers(NOW, NOW + 10_000),
    offset=offsets,
    store=st.none() | st.tuples(st.integers(-3, 3), st.integers(0, 20)),
    database=st.none() | st.tuples(st.integers(-3, 3), st.integers(0, 20)),
    first_sequence=st.integers(1, 10),
    force=st.booleans(),
    verified=st.booleans(),
)
@example(  # a failover to a replica that lagged, the stream ahead of the clock
    unix=NOW, offset=0, store=(3, 5), database=None, first_sequence=1, force=False, verified=False
)
def test_recover_script_agrees_with_core(
    client, unix, offset, store, database, first_sequence, force, verified
):
    local = unix + offset
    # Positions as seconds around the clock's.
    store = None if store is None else (local + store[0], store[1])
    database = None if database is None else (local + database[0], database[1])
    key = _set_state(client, store, rid=None if verified else "another-server")
    ds, dq = database or (0, 0)
    argv = (int(database is not None), ds, dq, offset, first_sequence, int(force))
    written = client.hgetall(key)
    # A dry run (snowid_recover --dry-run) answers what the recovery below does, and
    # writes nothing.
    _, _, _, *dry_after = RECOVER(client, (key,), (*argv, 1, unix))
    assert client.hgetall(key) == written
    RECOVER(client, (key,), (*argv, 0, unix))
    expected = resume(
        store,
        database,
        local,
        first_sequence=first_sequence,
        force=force,
        unverified=not verified,
    )
    assert _state(client, key) == expected
    assert tuple(dry_after) == expected
    assert client.hget(key, "rid").decode() == server_id(client, key)  # verified from now on


@pytest.mark.parametrize("stamped", [True, False], ids=["another-server", "unstamped"])
def test_reserve_issues_nothing_from_a_state_another_server_wrote(client, stamped):
    """A replica promoted by a failover holds a state the old primary wrote (or one written
    before states were stamped): RESERVE leaves it alone and tells the store to re-sync
    (the same answer as for no state at all)."""
    key = _set_state(client, (NOW, 5), rid="another-server")
    if not stamped:
        client.hdel(key, "rid")
    reply = RESERVE(client, (key,), (0, 10, 1, 1, 5, NOW, 0, "", "", "", ""))
    assert reply == [7]
    assert reserve_outcome(reply) is MISSING
    assert _state(client, key) == (NOW, 5)


def test_without_a_clock_argument_the_script_reads_the_redis_clock(client):
    """The clock arguments are optional: left out, the script reads TIME."""
    key = _set_state(client, (0, 0))
    before = int(time.time())
    reply = RESERVE(client, (key,), (0, 10, 1, 1, 5, "", "", "", "", "", ""))
    after = int(time.time())
    assert reply[0] == 1
    # Redis shares this host's clock: its second lies within the call (a second of slack).
    assert before - 1 <= reply[1] <= after + 1


def test_server_id_is_asked_of_the_server_answering_now(throwaway_redis):
    """A server restarted on the same address is another server (another ``run_id``): the
    identity a state is stamped with comes from the server, never from a dead link's memory."""
    client = throwaway_redis.client()
    before = server_id(client, "stream")
    throwaway_redis.restart()
    after = server_id(client, "stream")
    assert after == client.info("server")["run_id"]
    assert after != before
