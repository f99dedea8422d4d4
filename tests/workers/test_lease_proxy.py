"""Worker-id leases in Redis behind a proxy that does not serve INFO, and a failover behind
it to a replica that lagged: two processes, and no id issued twice, no worker id held by
two processes at once."""

from __future__ import annotations

import itertools
import time

import pytest
from django.test import override_settings

import django_snowid
from django_snowid.ids import issuer as ids
from django_snowid.settings_layouts import get_layout
from django_snowid.workers.pool import pool_name
from django_snowid.workers.stores import get_lease_store
from tests.support import INFO_ANSWERS, INFO_COMMAND, Children, DroppingProxy
from tests.workers.test_lease_store_loss import TTL_S, _issue_until

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("answer", list(INFO_ANSWERS))
def test_a_failover_behind_a_proxy_hands_no_live_worker_id_to_a_newcomer(
    throwaway_redis, second_redis, answer
):
    """A leases a worker id and issues ids through the proxy; the replica receives the
    pool as it is then, and lags behind A's renewals until A's record there has expired.
    The proxy fails over to it; B starts and leases while A still issues. The pool's
    server changed (the scripts see another identity whatever INFO says through the
    proxy): B waits until A re-asserted its lease, and takes another id."""
    replica = second_redis
    with (
        DroppingProxy(
            throwaway_redis.port, INFO_COMMAND, None, answer=INFO_ANSWERS[answer]
        ) as proxy,
        Children() as children,
        override_settings(
            CACHES=proxy.caches(),
            SNOWID_WORKER_ID_SOURCE="redis",
            SNOWID_WORKER_LEASE_TTL_S=TTL_S,
        ),
    ):
        ids.reset()
        started = children.context.Semaphore(0)
        mark = children.context.Value("d", 0.0)
        children.start(_issue_until, "A", mark, started, children.queue)
        assert started.acquire(timeout=20)
        key = get_lease_store("redis").key(pool_name(get_layout("default")))  # type: ignore[attr-defined]
        replica.client().restore(key, 0, throwaway_redis.client().dump(key))
        time.sleep(TTL_S + 0.3)  # A renews on the primary only: its record there expires
        proxy.retarget(replica.port)  # the failover
        failed_over_at = time.monotonic()
        children.start(_issue_until, "B", mark, started, children.queue)
        assert started.acquire(timeout=30)
        mark.value = time.monotonic()  # B issues: A and B go on side by side
        reports = children.results()
        ids.reset()
    issued = [i for _, batches, _ in reports for _, batch in batches for i in batch]
    assert len(issued) == len(set(issued)), f"{len(issued) - len(set(issued))} ids twice"
    _no_node_held_twice_at_once(reports)
    ((a, refused),) = [(batches, refusals) for role, batches, refusals in reports if role == "A"]
    assert not refused, refused[:1]
    assert len({django_snowid.decode(i).node for _, batch in a for i in batch}) == 1
    assert mark.value > failed_over_at + TTL_S  # B waited for A to re-assert its lease
    assert a[-1][0] > mark.value, "the holder from before stopped issuing"
    assert any(role == "B" and batches for role, batches, _ in reports)


def _no_node_held_twice_at_once(reports: list[tuple[str, list, list]]) -> None:
    """No two processes issued ids of one worker id during the same span of time."""
    spans: dict[int, list[tuple[float, float, str]]] = {}
    for role, batches, _refusals in reports:
        for node, group in itertools.groupby(
            ((t, django_snowid.decode(i).node) for t, batch in batches for i in batch),
            key=lambda pair: pair[1],
        ):
            times = [t for t, _ in group]
            spans.setdefault(node, []).append((times[0], times[-1], role))
    for node, used in spans.items():
        used.sort()
        for (_, end, first), (start, _, second) in itertools.pairwise(used):
            assert first == second or end < start, f"A and B issued at once on node {node}"
