"""RedisCalls on servers of the test's own: every redis-py error becomes the family's
exception, with the family's wording; a stopped server, a failover's replica and a key of
another type each give the same kind of exception in every family."""

from __future__ import annotations

import socket
import threading
import time

import pytest
import redis

from django_snowid.exceptions import OrderNumberError, SnowidError
from django_snowid.orders.stores import ORDERS
from django_snowid.sequences.stores import SEQUENCES
from django_snowid.stores import Family
from django_snowid.stores.redis_scripts import RedisCalls, RedisScript
from django_snowid.workers.stores import LEASES
from tests.support import DroppingProxy, ThrowawayRedis

pytestmark = pytest.mark.redis

FAMILIES = [pytest.param(f, id=f.label) for f in (ORDERS, LEASES, SEQUENCES)]
KEY = "{calls-test}:state"
COUNT = RedisScript("return redis.call('HINCRBY', KEYS[1], 'n', 1)", safe_to_retry=True)
WHERE = "cache alias 'snowid'"  # tests.support.redis_caches


@pytest.fixture
def calls_to(settings):
    """``calls_to(server, family)``: the family's RedisCalls through ``server``."""

    def calls(server: ThrowawayRedis | DroppingProxy, family: Family) -> RedisCalls:
        settings.CACHES = server.caches()
        return RedisCalls(family.errors)

    return calls


def _replica_of(primary: ThrowawayRedis, workdir: str) -> ThrowawayRedis:
    """A replica of ``primary`` that refuses stale reads once the primary is gone, synced."""
    replica = ThrowawayRedis(
        workdir, "--replicaof", "127.0.0.1", str(primary.port), "--replica-serve-stale-data", "no"
    )
    replica.start()
    deadline = time.monotonic() + 20
    while replica.client().info("replication")["master_link_status"] != "up":
        assert time.monotonic() < deadline, "the replica never synced"
        time.sleep(0.05)
    return replica


def _unavailable(
    family: Family, raised: pytest.ExceptionInfo[SnowidError], where: str = WHERE
) -> None:
    assert type(raised.value) is family.errors.unavailable
    head, tail = family.errors.unreachable.split("{error}")
    assert str(raised.value).startswith(head.format(where=where)), raised.value
    assert str(raised.value).endswith(tail), raised.value


@pytest.mark.parametrize("family", FAMILIES)
def test_a_stopped_server_is_unavailable(family, calls_to, throwaway_redis):
    calls = calls_to(throwaway_redis, family)
    assert calls.run(COUNT, [KEY]) == 1
    throwaway_redis.stop()
    with pytest.raises(SnowidError) as script:
        calls.run(COUNT, [KEY])
    _unavailable(family, script)
    with pytest.raises(SnowidError) as command:
        calls.command("hmget", KEY, ["n"], key=KEY)
    _unavailable(family, command)


class _Closing:
    """A listener on ``port`` that closes each connection as it accepts it, counting them:
    a server gone, each attempt of a client one connection."""

    def __init__(self, port: int) -> None:
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(64)
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self.listener.close()


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("made_by", ["django-redis", "redis-py"])
def test_an_outage_is_answered_at_once_without_redis_py_retries(
    family, made_by, calls_to, throwaway_redis, settings
):
    """A client made by ``redis.Redis(host, port)`` retries a command ten times, each on
    a new connection after a backoff (about 4 s in all); django-redis's makes none unless
    its pool is told to. Ours go once whatever the client, so that a caller hears of an
    outage at once. Each attempt is a connection to the dead server's port (stopped by
    its pid), where a listener closes it and counts it."""
    calls = calls_to(throwaway_redis, family)
    if made_by == "redis-py":
        port = throwaway_redis.port
        settings.SNOWID_REDIS_CLIENT_FACTORY = lambda: redis.Redis(host="127.0.0.1", port=port)
    throwaway_redis.stop()
    gone = _Closing(throwaway_redis.port)
    where = calls.describe().removeprefix("Redis (").removesuffix(")")
    try:
        for attempts in (1, 2):
            with pytest.raises(SnowidError) as command:
                calls.command("hmget", KEY, ["n"], key=KEY)
            _unavailable(family, command, where)
            assert gone.accepted == attempts
        for attempts in (3, 4):
            with pytest.raises(SnowidError) as listing:
                calls.command("scan_iter", match="{calls-test}*")
            _unavailable(family, listing, where)
            assert gone.accepted == attempts
    finally:
        gone.close()


def test_a_command_after_a_restart_goes_to_the_new_server(calls_to, throwaway_redis):
    """A link the server closed (it restarted since) is replaced before a command is sent
    on it: a restart, unlike an outage, is not answered with an error."""
    calls = calls_to(throwaway_redis, ORDERS)
    assert calls.command("hmget", KEY, ["n"], key=KEY) == [None]
    throwaway_redis.restart()
    throwaway_redis.client().hset(KEY, "n", 7)
    assert calls.command("hmget", KEY, ["n"], key=KEY) == [b"7"]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_connection_lost_while_a_script_loads_is_tried_again(family, calls_to, throwaway_redis):
    """A server restarted empty answers NOSCRIPT; if the connection then breaks during
    SCRIPT LOAD, the call goes on as after any broken connection: once more, anew."""
    with DroppingProxy(throwaway_redis.port, b"\r\nSCRIPT\r\n", times=1) as proxy:
        calls = calls_to(proxy, family)
        assert calls.run(COUNT, [KEY]) == 1
        assert proxy.dropped == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_a_connection_lost_each_time_a_script_loads_is_unavailable(
    family, calls_to, throwaway_redis
):
    with DroppingProxy(throwaway_redis.port, b"\r\nSCRIPT\r\n", times=None) as proxy:
        calls = calls_to(proxy, family)
        with pytest.raises(SnowidError) as script:
            calls.run(COUNT, [KEY])
        _unavailable(family, script)
        assert proxy.dropped >= 1  # it was the load that failed (the retry is tested above)
    assert throwaway_redis.client().hget(KEY, "n") is None  # nothing ran


@pytest.mark.parametrize("family", FAMILIES)
def test_a_key_of_another_type_is_refused_naming_the_key(family, calls_to, throwaway_redis):
    calls = calls_to(throwaway_redis, family)
    throwaway_redis.client().set(KEY, "a string, not a hash")
    for call in (lambda: calls.run(COUNT, [KEY]), lambda: calls.command("hgetall", KEY, key=KEY)):
        with pytest.raises(SnowidError) as raised:
            call()
        assert type(raised.value) is family.errors.refused
        message = str(raised.value)
        assert message.startswith(family.errors.bad_key.split("{key")[0]), message
        assert repr(KEY) in message and "WRONGTYPE" in message, message


@pytest.mark.parametrize("family", FAMILIES)
def test_a_replica_whose_primary_is_gone_is_unavailable(
    family, calls_to, throwaway_redis, tmp_path
):
    (tmp_path / "replica").mkdir()
    replica = _replica_of(throwaway_redis, str(tmp_path / "replica"))
    try:
        calls = calls_to(replica, family)
        throwaway_redis.stop()  # MASTERDOWN from now on
        with pytest.raises(SnowidError) as command:
            calls.command("hmget", KEY, ["n"], key=KEY)
        _unavailable(family, command)
        assert "MASTER is down" in str(command.value)
        with pytest.raises(SnowidError) as script:
            calls.run(COUNT, [KEY])
        _unavailable(family, script)
    finally:
        replica.stop()


def test_a_script_that_writes_on_a_replica_is_unavailable(calls_to, throwaway_redis, tmp_path):
    (tmp_path / "replica").mkdir()
    replica = _replica_of(throwaway_redis, str(tmp_path / "replica"))
    try:
        calls = calls_to(replica, ORDERS)
        with pytest.raises(SnowidError) as script:
            calls.run(COUNT, [KEY])  # READONLY (a demoted primary answers the same)
        _unavailable(ORDERS, script)
        assert "read only replica" in str(script.value)
    finally:
        replica.stop()


def test_a_reply_is_read_by_the_scripts_parser_and_its_errors_pass_through(
    calls_to, throwaway_redis
):
    calls = calls_to(throwaway_redis, ORDERS)
    doubled = RedisScript(COUNT.source, safe_to_retry=True, reply=lambda reply: 2 * int(reply))
    assert calls.run(doubled, [KEY]) == 2
    assert calls.run(COUNT, [KEY]) == 2  # no parser: the raw reply

    def refuse(reply: object) -> int:
        raise OrderNumberError(f"garbage: {reply!r}")

    with pytest.raises(OrderNumberError, match=r"^garbage: 3$"):
        calls.run(RedisScript(COUNT.source, safe_to_retry=True, reply=refuse), [KEY])

    def broken(reply: object) -> int:
        raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):  # not a Redis error: not ours to translate
        calls.run(RedisScript(COUNT.source, safe_to_retry=True, reply=broken), [KEY])


def test_a_client_that_cannot_be_made_is_refused(settings):
    settings.SNOWID_REDIS_CLIENT_FACTORY = "tests.stores.test_redis_client.missing"
    calls = RedisCalls(SEQUENCES.errors)
    with pytest.raises(SnowidError, match="SNOWID_REDIS_CLIENT_FACTORY") as raised:
        calls.run(COUNT, [KEY])
    assert type(raised.value) is SEQUENCES.errors.refused
