"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext


def interleaved_rates(
    calls: Sequence[Callable[[int], object]],
    n: int,
    chunk: int = 100,
    contexts: Sequence[Callable[[], AbstractContextManager[object]] | None] | None = None,
) -> list[float]:
    """Calls per second of each of ``calls``, each called ``n`` times (with 0..n-1).

    They run in alternating chunks: a write that commits is dominated by fsync, whose
    speed drifts on these machines; interleaving makes the compared calls share the drift.
    The order rotates from chunk to chunk, so that no call always follows the same one
    (which call runs first after another measurably changes its time).
    ``contexts[i]``, if given, makes the context (say ``override_settings``) each chunk
    of ``calls[i]`` runs in; entering and leaving it is not timed.
    """
    spent = [0.0] * len(calls)
    contexts = contexts or [None] * len(calls)
    for number, start in enumerate(range(0, n, chunk)):
        for turn in range(len(calls)):
            index = (number + turn) % len(calls)
            call, make_context = calls[index], contexts[index]
            with make_context() if make_context else nullcontext():
                began = time.perf_counter()
                for i in range(start, min(start + chunk, n)):
                    call(i)
                spent[index] += time.perf_counter() - began
    return [n / t for t in spent]
