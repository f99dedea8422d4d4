"""Each family's Redis store, on a server of the test's own: whatever call it makes, a
stopped server is the family's "unavailable" exception (never redis-py's), and a
connection broken while a script loads is tried again like any broken connection."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import pytest

from django_snowid.orders.stores import ORDERS
from django_snowid.orders.stores.base import MISSING, RecoverArgs, ReserveArgs
from django_snowid.orders.stores.redis import RedisOrderStore
from django_snowid.sequences.stores import SEQUENCES
from django_snowid.sequences.stores.redis import RedisSequenceStore
from django_snowid.stores import Family
from django_snowid.workers.stores import LEASES
from django_snowid.workers.stores.base import LeaseRequest, StoreSettling
from django_snowid.workers.stores.redis import RedisLeaseStore
from tests.support import DroppingProxy

pytestmark = pytest.mark.redis

RESERVE = ReserveArgs(offset=0, cap=99, wanted=1, first_sequence=1, max_lead=2)
RECOVER = RecoverArgs(0, 1, force=False)


def _lease_request() -> LeaseRequest:
    return LeaseRequest(pool="p", size=4, owner="test:1", token=secrets.token_hex(8), ttl_ms=5000)


def _calls() -> dict[str, tuple[Family, Callable[[], Any]]]:
    """Every call of the three Redis stores that reaches Redis, by name."""
    orders = RedisOrderStore("snowid", "p")
    leases = RedisLeaseStore("snowid")
    sequences = RedisSequenceStore("snowid", "p")
    return {
        "orders.reserve": (ORDERS, lambda: orders.reserve("s", RESERVE)),
        "orders.reserve_block": (ORDERS, lambda: orders.reserve_block("s", RESERVE)),
        "orders.recover": (ORDERS, lambda: orders.recover("s", None, RECOVER)),
        "orders.read": (ORDERS, lambda: orders.read("s")),
        "orders.streams": (ORDERS, orders.streams),
        "leases.acquire": (LEASES, lambda: leases.acquire(_lease_request())),
        "leases.renew": (LEASES, lambda: leases.renew("p", 0, "token", 5000, -1)),
        "leases.leases": (LEASES, leases.leases),
        "sequences.state": (SEQUENCES, lambda: sequences.state("s")),
    }


@pytest.mark.parametrize("call", list(_calls()))
def test_every_call_of_a_stopped_server_is_the_familys_unavailable(call, settings, throwaway_redis):
    settings.CACHES = throwaway_redis.caches()
    family, run = _calls()[call]
    throwaway_redis.stop()
    with pytest.raises(family.errors.unavailable, match="unreachable"):
        run()


def test_a_reservation_survives_a_connection_lost_while_its_script_loads(settings, throwaway_redis):
    """After a restart the script is gone (NOSCRIPT); the connection breaking during
    SCRIPT LOAD is one more broken connection: tried again."""
    settings.CACHES = throwaway_redis.caches()
    assert RedisOrderStore("snowid", "p").reserve("s", RESERVE) is MISSING
    RedisOrderStore("snowid", "p").recover("s", None, RECOVER)
    with DroppingProxy(throwaway_redis.port, b"\r\nSCRIPT\r\n", times=1) as proxy:
        settings.CACHES = proxy.caches()
        throwaway_redis.client().script_flush()
        outcome = RedisOrderStore("snowid", "p").reserve("s", RESERVE)
        assert proxy.dropped == 1
    assert outcome is not MISSING


def test_a_lease_survives_a_connection_lost_while_its_script_loads(settings, throwaway_redis):
    with DroppingProxy(throwaway_redis.port, b"\r\nSCRIPT\r\n", times=1) as proxy:
        settings.CACHES = proxy.caches()
        with pytest.raises(StoreSettling):  # the script's answer to a new pool: wait
            RedisLeaseStore("snowid").acquire(_lease_request())
        assert proxy.dropped == 1
