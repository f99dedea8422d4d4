"""A lease Redis that loses its records (FLUSHALL, a kill and an empty restart) while
processes issue ids: nobody issues a duplicate, and the holders from before keep issuing."""

from __future__ import annotations

import itertools
import logging
import time

import pytest
from django.test import override_settings

import django_snowid
from django_snowid.exceptions import WorkerIdError
from django_snowid.ids import issuer as ids
from django_snowid.settings_layouts import get_layout, layout_names
from django_snowid.workers.pool import pool_name
from django_snowid.workers.stores.base import horizon_text
from tests.support import Children

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Renewed every 1 s: a heartbeat that a machine busy with other tests delays by a second
# does not lose its lease.
TTL_S = 3.0
#: Tries each process makes once every replacement issued: the holders from before and
#: the replacements issue side by side, however long a busy machine takes to get there.
AFTER_MARK = 50


def _issue_until(role: str, mark, started, results) -> None:
    """Issue ids in small batches until ``AFTER_MARK`` tries started after ``mark``
    (monotonic; 0 until the parent sets it); report every batch and every refusal."""
    batches: list[tuple[float, list[int]]] = []
    refusals: list[str] = []
    first = django_snowid.next_id()
    batches.append((time.monotonic(), [first]))
    started.release()
    after = 0
    while after < AFTER_MARK:
        now = time.monotonic()
        try:
            batches.append((now, django_snowid.next_ids(20)))
        except WorkerIdError as exc:
            refusals.append(f"{now:.3f} {type(exc).__name__}: {exc}")
        at = mark.value
        after += bool(at) and now > at
        time.sleep(0.002)
    results.put((role, batches, refusals))


@pytest.mark.parametrize("loss", ["flushall", "restart"])
def test_lease_redis_losing_its_records_under_eight_issuing_processes(throwaway_redis, loss):
    with (
        Children() as children,
        override_settings(
            CACHES=throwaway_redis.caches(),
            SNOWID_WORKER_ID_SOURCE="redis",
            SNOWID_WORKER_LEASE_TTL_S=TTL_S,
        ),
    ):
        ids.reset()
        started = children.context.Semaphore(0)
        mark = children.context.Value("d", 0.0)
        for _ in range(8):
            children.start(_issue_until, "old", mark, started, children.queue)
        for _ in range(8):
            assert started.acquire(timeout=20)
        time.sleep(TTL_S / 3 + 0.3)  # all eight issue, each under a lease renewed once
        if loss == "flushall":
            throwaway_redis.client().flushall()
        else:
            throwaway_redis.restart()  # no persistence: it comes back empty
        lost_at = time.monotonic()
        # Replacements start while the holders from before have not re-asserted yet; they
        # wait until every holder from before re-asserted its lease or fenced itself.
        for _ in range(4):
            children.start(_issue_until, "new", mark, started, children.queue)
        for _ in range(4):
            assert started.acquire(timeout=30)
        mark.value = time.monotonic()  # past the time the leases from before had left
        reports = children.results()
        ids.reset()
    everything = [i for _, batches, _ in reports for _, ids in batches for i in ids]
    assert len(everything) == len(set(everything)), (
        f"{len(everything) - len(set(everything))} duplicate ids"
    )
    assert mark.value > lost_at + TTL_S
    pauses = []
    for role, batches, refusals in reports:
        if role != "old":
            continue
        assert not refusals, (lost_at, refusals[:1])
        nodes = {django_snowid.decode(i).node for _, ids in batches for i in ids}
        assert len(nodes) == 1, f"a holder from before changed its worker id: {nodes}"
        assert batches[-1][0] > mark.value, "a holder from before stopped issuing"
        times = [t for t, _ in batches]
        pauses.append(max(b - a for a, b in itertools.pairwise(times)))
    new_nodes = [django_snowid.decode(r[1][0][1][0]).node for r in reports if r[0] == "new"]
    assert len(new_nodes) == 4
    print(f"{loss}: longest pause of a holder from before {max(pauses) * 1000:.0f} ms")


def test_a_promoted_replica_that_lagged_behind_the_renewals_hands_out_no_live_id(
    throwaway_redis, tmp_path
):
    """The replica holds the pool as it was when A took worker id 0; A renewed on the
    primary since, and its record on the replica has expired. After the switch, a newcomer
    must not be handed worker id 0 while A may still issue under it."""
    from django_snowid.core.layout import PRESETS
    from django_snowid.workers.lease import release_all
    from django_snowid.workers.leased import lease_generator
    from django_snowid.workers.stores import get_lease_store
    from tests.support import ThrowawayRedis

    (tmp_path / "replica").mkdir()
    replica = ThrowawayRedis(str(tmp_path / "replica"))
    replica.start()
    layout = PRESETS["classic"]
    options = {"SNOWID_WORKER_ID_SOURCE": "redis", "SNOWID_WORKER_LEASE_TTL_S": TTL_S}
    try:
        with override_settings(CACHES=throwaway_redis.caches(), **options):
            a = lease_generator(layout, 0, "redis")
            key = get_lease_store("redis").key("node-bits-12-10")  # type: ignore[attr-defined]
            replica.client().restore(key, 0, throwaway_redis.client().dump(key))
            time.sleep(TTL_S + 0.3)  # A's heartbeat renews on the primary only
            a.next_id()
        with override_settings(CACHES=replica.caches(), **options):  # the failover
            b = lease_generator(layout, 0, "redis")
            a_still_issues = True
            try:
                a.next_id()  # A's lease is on its original node value
            except WorkerIdError:
                a_still_issues = False
            assert b.node != a.node or not a_still_issues, (
                "the newcomer was handed a worker id whose holder still issues"
            )
            assert a_still_issues, "a live holder rides through the failover"
    finally:
        release_all()
        replica.stop()


def test_newcomers_of_two_pools_wait_once_together(throwaway_redis, caplog):
    """A new process (or one whose leases were lost) on a Redis that lost its records, or
    never had any, needs ids of two layouts leased from two pools: the second pool's wait
    runs during the first's, and one line says which pools and until when."""
    pools = [pool_name(get_layout(name)) for name in ("default", "js")]
    assert pools[0] != pools[1]
    with override_settings(
        CACHES=throwaway_redis.caches(),
        SNOWID_WORKER_ID_SOURCE="redis",
        SNOWID_WORKER_LEASE_TTL_S=TTL_S,
    ):
        ids.reset()
        with caplog.at_level(logging.WARNING, logger="django_snowid"):
            django_snowid.next_id()
            django_snowid.next_id(layout="js")
        waits = [r.getMessage() for r in caplog.records if "lost its records" in r.getMessage()]
        assert len(waits) == 1, waits
        # Until the last of the pools of the settings' layouts, whose waits started together.
        client = throwaway_redis.client()
        since = [int(client.hget(key, "since")) for key in client.scan_iter("{snowid:workers:*")]
        assert len(since) == len({pool_name(get_layout(name)) for name in layout_names()})
        ttl_ms = int(TTL_S * 1000)
        grace_ms = ttl_ms + min(ttl_ms // 3, 2000)  # the TTL and the holders' margin
        assert f"until {horizon_text(max(since) + grace_ms)}" in waits[0]
        assert all(repr(pool) in waits[0] for pool in pools)
        ids.reset()
