"""Writers whose transactions commit out of id order, and clients that poll for new rows:
how many committed rows each client missed, and how many it was served twice.

Used by ``benchmarks/bench_feed_load.py`` (the full scenario) and by the test suite (a
short one). Writers are forked processes, each with a worker id of its own; each
transaction draws its id on save (its first statement), then works for a random time
before it commits, so a later id often commits first.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: A client: called every poll, it returns the ids it was served (a repeat included).
Poll = Callable[[], list[int]]


@dataclass(frozen=True)
class Load:
    writers: int = 8
    seconds: float = 60.0
    longest_transaction_s: float = 2.0
    poll_every_s: float = 0.1


@dataclass(frozen=True)
class Outcome:
    """Rows committed, missed and served twice; ``longest_s``: the longest time from
    drawing an id to its commit (lock waits included), the bound a settle window needs."""

    committed: int
    missed: int
    twice: int
    longest_s: float


def _write(model: Any, worker: int, load: Load, until: float, queue: Any) -> None:
    from django.db import DatabaseError, transaction

    from django_snowid.core.generator import SnowflakeGenerator
    from django_snowid.settings_layouts import get_layout

    generator = SnowflakeGenerator(get_layout(), worker)
    chance = random.Random(worker)
    committed: list[int] = []
    longest = 0.0
    while time.monotonic() < until:
        drawn = time.monotonic()
        try:
            with transaction.atomic():
                row = model.objects.create(id=generator.next_id(), body=f"w{worker}")
                time.sleep(chance.uniform(0, load.longest_transaction_s))
        except DatabaseError:  # SQLite's lock wait ran out: rolled back, not committed
            continue
        longest = max(longest, time.monotonic() - drawn)
        committed.append(row.pk)
    queue.put((committed, longest))


def _start_writers(model: Any, load: Load, first_worker: int) -> tuple[list[Any], Any]:
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        connection.close()  # a child must not share its parent's socket
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    until = time.monotonic() + load.seconds
    processes = [
        context.Process(target=_write, args=(model, first_worker + i, load, until, queue))
        for i in range(load.writers)
    ]
    for process in processes:
        process.start()
    return processes, queue


def run_load(
    model: Any,
    polls: Mapping[str, Poll],
    load: Load,
    *,
    drained: Callable[[int], bool],
    first_worker: int = 100,
) -> dict[str, Outcome]:
    """Run ``load`` on ``model`` while every client of ``polls`` polls; after the writers
    end, poll until ``drained(newest committed id)`` says ours has passed it."""
    processes, queue = _start_writers(model, load, first_worker)
    served: dict[str, Counter[int]] = {name: Counter() for name in polls}

    def poll_all() -> None:
        for name, poll in polls.items():
            served[name].update(poll())

    while any(process.is_alive() for process in processes):
        poll_all()
        time.sleep(load.poll_every_s)
    replies = [queue.get(timeout=300) for _ in processes]
    for process in processes:
        process.join()
    committed = {pk for ids, _ in replies for pk in ids}
    longest = max((seconds for _, seconds in replies), default=0.0)
    newest = max(committed, default=0)
    poll_all()
    while not drained(newest):
        time.sleep(load.poll_every_s)
        poll_all()
    return {
        name: Outcome(
            committed=len(committed),
            missed=len(committed - set(counts)),
            twice=sum(1 for pk in committed if counts[pk] > 1),
            longest_s=longest,
        )
        for name, counts in served.items()
    }
