"""What the serialization benchmarks share (bench_drf.py, bench_graphql.py): Django set up
without a database, objects to write (an id, a foreign-key id, an order number, a name),
and the timing of several ways of writing them."""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import django
from django.conf import settings

CHUNK = 500


def arguments(doc: str) -> argparse.Namespace:
    """``--objects`` (default 10,000) and ``--repeat`` (default 7), the script's ``doc``
    first line as its description."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    return parser.parse_args()


def setup_django() -> None:
    """Our app alone, a static worker id, no database."""
    settings.configure(
        INSTALLED_APPS=["django_snowid"],
        DATABASES={},
        USE_TZ=True,
        SNOWID_WORKER_ID=1,
        SNOWID_WORKER_ID_SOURCE="static",
    )
    django.setup()


def make_objects(count: int) -> list[SimpleNamespace]:
    from django_snowid.ids.issuer import get_generator

    generator = get_generator()
    first = (250413120000 << 18) | (1 << 4)  # an order number of the default format
    return [
        SimpleNamespace(
            id=generator.next_id(),
            product_id=generator.next_id(),
            number=first + (i << 4),
            name=f"item {i}",
        )
        for i in range(count)
    ]


def alternate(
    runs: dict[str, Callable[[list[Any]], Sequence[Any]]], objects: list[Any], repeat: int
) -> dict[str, list[float]]:
    """Seconds each run took over all ``objects``, once per repeat.

    The machines are shared and noisy: the runs alternate in chunks of ``CHUNK`` (the order
    rotating), so all see the same drift; a repeat sums its chunks. A run returns what it
    wrote, one item per object.
    """
    chunks = [objects[i : i + CHUNK] for i in range(0, len(objects), CHUNK)]
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        spent = dict.fromkeys(runs, 0.0)
        gc.collect()
        for number, chunk in enumerate(chunks):
            order = list(runs.items())
            for name, run in order if number % 2 == 0 else reversed(order):
                began = time.perf_counter()
                written = run(chunk)
                spent[name] += time.perf_counter() - began
                assert len(written) == len(chunk)
        for name, seconds in spent.items():
            times[name].append(seconds)
    return times
