"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence


def interleaved_rates(
    calls: Sequence[Callable[[int], object]], n: int, chunk: int = 100
) -> list[float]:
    """Calls per second of each of ``calls``, each called ``n`` times (with 0..n-1).

    They run in alternating chunks: a write that commits is dominated by fsync, whose
    speed drifts on these machines; interleaving makes the compared calls share the drift.
    """
    spent = [0.0] * len(calls)
    for start in range(0, n, chunk):
        for index, call in enumerate(calls):
            began = time.perf_counter()
            for i in range(start, min(start + chunk, n)):
                call(i)
            spent[index] += time.perf_counter() - began
    return [n / t for t in spent]
