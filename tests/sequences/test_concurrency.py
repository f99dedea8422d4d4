"""8 processes drawing from one named sequence at once, through Redis."""

from __future__ import annotations

import itertools
import multiprocessing
import os

import pytest
from django.db import connections
from django.test import override_settings

from django_snowid.sequences import next_value
from django_snowid.sequences.stores.database import read_marks

PROCESSES = 8
# 20,000 a process took 11-35 s on a loaded two-core machine: 10,000 by default, the full
# size with SNOWID_SEQUENCE_TEST_PER_PROCESS=20000.
PER_PROCESS = int(os.environ.get("SNOWID_SEQUENCE_TEST_PER_PROCESS", "10000"))


def _draw(process: int) -> list[int]:
    try:
        return [next_value("customer") for _ in range(PER_PROCESS)]
    finally:
        connections.close_all()


@pytest.mark.slow
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_processes_draw_unique_increasing_values():
    connections.close_all()  # children must not share the parent's socket
    context = multiprocessing.get_context("fork")
    # Settings are changed here, before the fork: override_settings is not thread-safe.
    with override_settings(SNOWID_SEQUENCE_BACKEND="redis"), context.Pool(PROCESSES) as pool:
        per_process = pool.map(_draw, range(PROCESSES))
    values = [v for vs in per_process for v in vs]
    assert len(values) == PROCESSES * PER_PROCESS
    assert len(set(values)) == len(values), "a value was issued twice"
    for vs in per_process:
        assert all(a < b for a, b in itertools.pairwise(vs)), "a process's values went down"
    assert max(values) <= read_marks()["customer"], "a value above the committed mark"
