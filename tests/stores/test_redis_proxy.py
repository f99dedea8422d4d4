"""Redis behind a proxy that does not serve INFO (Envoy, twemproxy, a managed service that
renames it): the proxy answers INFO with an error, or drops the connection. Every store
still knows the server it talks to (its scripts read it), so threads and processes work
as with Redis itself; a server that hides INFO from scripts too is refused, by our error
and by a check."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import redis
from django.core import checks
from django.test import override_settings

from django_snowid import metrics
from django_snowid.exceptions import OrderNumberUnavailable
from django_snowid.sequences import next_value
from django_snowid.stores.redis_scripts import server_id
from tests.support import INFO_ANSWERS, INFO_COMMAND, DroppingProxy, ThrowawayRedis
from tests.testapp.models import ShopOrder

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]

THREADS, CALLS = 4, 10


@pytest.fixture(params=list(INFO_ANSWERS))
def proxy(request: Any, throwaway_redis: ThrowawayRedis) -> Any:
    answer = INFO_ANSWERS[request.param]
    with DroppingProxy(throwaway_redis.port, INFO_COMMAND, times=None, answer=answer) as proxy:
        yield proxy


def _resyncs() -> int:
    return sum(
        value
        for (name, _labels), value in metrics.counts().items()
        if name in ("recoveries", "failover_resyncs")
    )


def _in_threads(work: Any) -> list[Any]:
    """``work(thread)`` in :data:`THREADS` threads at once (each its own connection)."""
    results: list[Any] = [None] * THREADS
    barrier = threading.Barrier(THREADS)

    def run(thread: int) -> None:
        barrier.wait()
        try:
            results[thread] = work(thread)
        except Exception as exc:  # the test fails on it
            results[thread] = exc

    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_threads_behind_a_proxy_that_hides_info_share_one_server(settings, proxy, throwaway_redis):
    """Each thread's connection asks INFO and is refused, or cut, or answered by the proxy
    for itself: the scripts read the identity themselves, so the stores see one server (no
    state re-synced after the first), and the state is stamped with the server's own
    ``run_id``."""
    settings.CACHES = proxy.caches()
    settings.SNOWID_ORDER_BACKEND = settings.SNOWID_SEQUENCE_BACKEND = "redis"
    settings.SNOWID_ORDER_BLOCK_MAX = 1  # a script call a number
    field = ShopOrder._meta.get_field("number")
    ShopOrder.objects.create(user_id=1)  # the stream, recovered once
    next_value("customer")  # the sequence, started once
    before = _resyncs()
    results = _in_threads(
        lambda t: [(field.issuer().next_number(t), next_value("customer")) for _ in range(CALLS)]
    )
    assert [r for r in results if isinstance(r, Exception)] == []
    numbers = [n for pairs in results for n, _ in pairs]
    values = [v for pairs in results for _, v in pairs]
    assert len(set(numbers)) == len(numbers) and len(set(values)) == len(values)
    assert _resyncs() == before, "a thread's connection was taken for another server"
    assert proxy.dropped >= THREADS  # INFO was asked on each connection, and not served
    run_id = throwaway_redis.client().info("server")["run_id"]
    key = f"{{{settings.SNOWID_REDIS_KEY_PREFIX}:order:{field.stream}}}"
    assert throwaway_redis.client().hget(key, "rid").decode() == run_id
    through_proxy = redis.Redis(host="127.0.0.1", port=proxy.port, socket_timeout=2)
    assert server_id(through_proxy, key) == run_id


def test_a_server_that_hides_info_from_scripts_too_is_refused(settings, tmp_path):
    """INFO renamed away on the server itself: no identity anywhere. Nothing is issued
    (our error names the problem and the fix), and ``check --deploy`` says it."""
    server = ThrowawayRedis(str(tmp_path), "--rename-command", "INFO", "")
    server.start()
    try:
        settings.CACHES = server.caches()
        settings.SNOWID_ORDER_BACKEND = "redis"
        with pytest.raises(OrderNumberUnavailable, match="does not say which server it is"):
            ShopOrder.objects.create(user_id=1)
        assert ShopOrder.objects.count() == 0
        with override_settings(SNOWID_WORKER_ID_SOURCE="static"):
            found = [
                m
                for m in checks.run_checks(include_deployment_checks=True, databases=[])
                if m.id == "django_snowid.E510"
            ]
        assert len(found) == 1 and "INFO" in found[0].msg
    finally:
        server.stop()
