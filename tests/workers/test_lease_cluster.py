"""Worker-id leases on a 3-primary Redis Cluster the test starts: four processes issue
ids while their pool's slot migrates to another primary."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from django.db import connections
from django.test import override_settings

import django_snowid
from django_snowid.ids import issuer as ids
from django_snowid.workers.stores import get_lease_store
from tests import redis_topologies
from tests.redis_topologies import until_after

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PROCESSES = 4
# Renewed every 1 s: several renewals on each side of the migration, and room for a
# heartbeat that a machine busy with other tests delays.
TTL_S = 3.0


def _issue(migrated: Any, results: Any, process: int) -> None:
    """Issue ids until a second longer than a lease lives unrenewed after the migration."""
    try:  # the lease is not released: it lives on for the newcomer to respect
        batches, _, errors = until_after(
            migrated, TTL_S + 1, lambda: django_snowid.next_ids(50), pause=0.005
        )
    finally:
        connections.close_all()
    results.put((process, batches, errors))


def test_leases_from_four_processes_unique_across_a_slot_migration(cluster):
    with override_settings(
        SNOWID_WORKER_ID_SOURCE="redis",
        SNOWID_WORKER_LEASE_TTL_S=TTL_S,
        SNOWID_REDIS_CLIENT_FACTORY="tests.redis_topologies.current_client",
    ):
        assert redis_topologies.CURRENT is cluster
        ids.reset()
        first = django_snowid.next_id()  # a brand-new pool: the one wait, taken here
        key = get_lease_store("redis").key("node-bits-12-10")  # type: ignore[attr-defined]
        slot, _source, target, per_process = cluster.migrate_while_writing(
            key, _issue, PROCESSES, after=0.8
        )
        # A newcomer after the migration: the new owner holds records it did not write,
        # so it waits for the holders to re-assert theirs, then takes a free id.
        ids.reset()
        newcomer = django_snowid.decode(django_snowid.next_id()).node
        ids.reset()
    assert cluster.owner(slot) is target
    assert [errors for *_, errors in per_process] == [[]] * PROCESSES
    nodes = {django_snowid.decode(b[0]).node for _, batches, _ in per_process for b in batches}
    assert len(nodes) == PROCESSES, "two processes shared a worker id"
    assert newcomer not in nodes
    everything = [first] + [i for _, batches, _ in per_process for b in batches for i in b]
    assert len(set(everything)) == len(everything), "an id was issued twice"
    for _, batches, _ in per_process:
        mine = [i for b in batches for i in b]
        assert all(a < b for a, b in itertools.pairwise(mine)), "a process's ids went down"
