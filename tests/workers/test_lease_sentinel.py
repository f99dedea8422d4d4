"""Worker-id leases behind Sentinel, and on a Redis Cluster whose primary of the pool's slot
dies: the primary killed with SIGKILL while four processes issue ids; after the promotion,
no id twice, and every process issues on."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from django.db import connections
from django.test import override_settings

import django_snowid
from django_snowid.exceptions import WorkerIdError
from django_snowid.settings_layouts import get_layout
from django_snowid.workers.pool import pool_for
from django_snowid.workers.stores import get_lease_store
from tests.redis_topologies import FAILOVERS, Writers, failover_topology

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PROCESSES = 4
# Valid 10 s after a renewal (renewed every 4 s, retried every 0.5 s after a failure):
# live holders ride through a promotion (about 2.3 s).
TTL_S = 12.0


def _issue(stop: Any, results: Any, process: int) -> None:
    batches: list[tuple[float, list[int]]] = []
    refusals: list[str] = []
    try:
        while not stop.is_set():
            try:
                batches.append((time.monotonic(), django_snowid.next_ids(20)))
            except WorkerIdError as exc:  # a lease that could not be renewed: documented
                refusals.append(f"{type(exc).__name__}: {exc}")
                time.sleep(0.05)
            time.sleep(0.002)
    finally:
        connections.close_all()
        results.put((process, batches, refusals))


@pytest.mark.parametrize("kind", FAILOVERS)
def test_failover_under_four_issuing_processes_shares_no_worker_id(tmp_path, capsys, kind):
    """Slow: the promotion takes seconds, and the writers go on for half a lease's
    time-to-live after it, so that their renewals reach the new primary."""
    with (
        failover_topology(kind, str(tmp_path)) as (topology_settings, kill),
        override_settings(
            **topology_settings,
            SNOWID_WORKER_ID_SOURCE="redis",
            SNOWID_WORKER_LEASE_TTL_S=TTL_S,
        ),
    ):
        django_snowid.next_id()  # a brand-new pool waits once: here, not in the writers
        pool = pool_for(get_layout(), 0).name
        key = get_lease_store("redis").key(pool)  # type: ignore[attr-defined]
        connections.close_all()
        with Writers(_issue, PROCESSES) as writers:
            time.sleep(1.0)
            killed_at, promoted_at = kill(key)
            time.sleep(TTL_S / 2)  # renewals reached the new primary
            writers.event.set()
            per_process = writers.results()
        django_snowid.ids.issuer.reset()
    everything = [i for _, batches, _ in per_process for _, b in batches for i in b]
    assert len(set(everything)) == len(everything), "an id was issued twice"
    for _, batches, _ in per_process:
        assert any(t > promoted_at + 2.0 for t, _ in batches), "stopped after the failover"
        mine = [i for _, b in batches for i in b]
        assert all(a < b for a, b in itertools.pairwise(mine)), "a process's ids went down"
    pause = max(
        max(b - a for (a, _), (b, _) in itertools.pairwise(batches))
        for _, batches, _ in per_process
    )
    with capsys.disabled():
        print(
            f"\nLeases, {kind} failover: promotion {promoted_at - killed_at:.2f} s after "
            f"SIGKILL; longest pause of an issuing process {pause:.2f} s; "
            f"{sum(len(r) for *_, r in per_process)} refusals; {len(everything)} ids, none twice"
        )
