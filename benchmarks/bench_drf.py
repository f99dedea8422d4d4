"""Serializing ids with Django REST framework: our field next to DRF's own, same run.

    python benchmarks/bench_drf.py [--objects 10000] [--repeat 7]

Serializes ``--objects`` objects (an id, a foreign-key id, an order number and a name) with
a serializer using ``SnowflakeIdField`` and ``OrderNumberSerializerField`` and with one
using DRF's ``BigIntegerField(coerce_to_string=True)``;
the two alternate in chunks of 500, and every figure is the median of ``--repeat`` runs.
Target: ours within 1.1x of DRF's.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django
from django.conf import settings

settings.configure(
    INSTALLED_APPS=["django_snowid"],
    DATABASES={},
    USE_TZ=True,
    SNOWID_WORKER_ID=1,
    SNOWID_WORKER_ID_SOURCE="static",
)
django.setup()

from rest_framework import serializers

from django_snowid.core.order_format import OrderNumberFormat
from django_snowid.drf import OrderNumberSerializerField, SnowflakeIdField
from django_snowid.ids.issuer import get_generator

TARGET = 1.1
CHUNK = 500


class Ours(serializers.Serializer):
    id = SnowflakeIdField(read_only=True)
    product_id = SnowflakeIdField(read_only=True)
    number = OrderNumberSerializerField(read_only=True, format=OrderNumberFormat())
    name = serializers.CharField()


class Drfs(serializers.Serializer):
    id = serializers.BigIntegerField(read_only=True, coerce_to_string=True)
    product_id = serializers.BigIntegerField(read_only=True, coerce_to_string=True)
    number = serializers.BigIntegerField(read_only=True, coerce_to_string=True)
    name = serializers.CharField()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    generator = get_generator()
    first = (250413120000 << 18) | (1 << 4)  # an order number of the default format
    rows = [
        SimpleNamespace(
            id=generator.next_id(),
            product_id=generator.next_id(),
            number=first + (i << 4),
            name=f"item {i}",
        )
        for i in range(args.objects)
    ]
    # Same output, or the comparison means nothing.
    assert Ours(rows[:3], many=True).data == Drfs(rows[:3], many=True).data

    # The machines are shared and noisy: the two serializers alternate chunk by chunk
    # (the order rotating), so both see the same drift; a repeat sums its chunks.
    chunks = [rows[i : i + CHUNK] for i in range(0, len(rows), CHUNK)]
    times: dict[str, list[float]] = {"ours": [], "drf": []}
    for _ in range(args.repeat):
        spent = {"ours": 0.0, "drf": 0.0}
        gc.collect()
        for number, chunk in enumerate(chunks):
            order = [("ours", Ours), ("drf", Drfs)]
            for name, serializer in order if number % 2 == 0 else reversed(order):
                began = time.perf_counter()
                data = serializer(chunk, many=True).data
                spent[name] += time.perf_counter() - began
                assert len(data) == len(chunk)
        for name, seconds in spent.items():
            times[name].append(seconds)
    ours, drf = statistics.median(times["ours"]), statistics.median(times["drf"])
    ratios = sorted(o / d for o, d in zip(times["ours"], times["drf"], strict=True))
    print(
        f"Serializing {args.objects:,} objects (id, foreign key, order number, name), "
        f"median of {args.repeat}"
    )
    print(f"  SnowflakeIdField, OrderNumberSerializerField {ours * 1000:6.1f} ms")
    print(f"  BigIntegerField(coerce_to_string=True)     {drf * 1000:8.1f} ms")
    ratio = ours / drf
    verdict = "within" if ratio <= TARGET else "MISSES"
    print(
        f"  ratio ours/drf {ratio:.3f} ({verdict} the {TARGET}x target; "
        f"paired ratios {ratios[0]:.3f}..{ratios[-1]:.3f})"
    )


if __name__ == "__main__":
    main()
