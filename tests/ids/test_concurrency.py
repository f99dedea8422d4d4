"""4 processes x 4 threads x 25,000 ids, one generator per process, distinct worker ids."""

from __future__ import annotations

import multiprocessing
import threading
from itertools import pairwise

import pytest

from django_snowid.core.generator import SnowflakeGenerator
from django_snowid.core.layout import PRESETS

PROCESSES, THREADS, PER_THREAD = 4, 4, 25_000


def _issue(worker: int) -> list[list[int]]:
    # The generator is created in the child: one per process, never inherited.
    gen = SnowflakeGenerator(PRESETS["classic"], worker)
    barrier = threading.Barrier(THREADS)
    results: list[list[int]] = [[] for _ in range(THREADS)]

    def run(out: list[int]) -> None:
        barrier.wait()
        out.extend(gen.next_id() for _ in range(PER_THREAD))

    threads = [threading.Thread(target=run, args=(out,)) for out in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.slow
@pytest.mark.parametrize("start_method", ["spawn", "fork"])
def test_processes_and_threads_never_collide(start_method):
    context = multiprocessing.get_context(start_method)
    with context.Pool(PROCESSES) as pool:
        per_process = pool.map(_issue, range(1, PROCESSES + 1))
    everything: list[int] = []
    for worker, threads in enumerate(per_process, start=1):
        for ids in threads:
            assert len(ids) == PER_THREAD
            assert all(a < b for a, b in pairwise(ids)), "a thread saw ids go down"
        ids_of_process = [i for ids in threads for i in ids]
        assert len(set(ids_of_process)) == len(ids_of_process)
        assert {PRESETS["classic"].decode(i).node for i in ids_of_process} == {worker}
        everything.extend(ids_of_process)
    assert len(everything) == PROCESSES * THREADS * PER_THREAD
    assert len(set(everything)) == len(everything), "duplicate ids across processes"
