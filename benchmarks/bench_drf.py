"""Serializing ids with Django REST framework: our field next to DRF's own, same run.

    python benchmarks/bench_drf.py [--objects 10000] [--repeat 7]

Serializes ``--objects`` objects (an id, a foreign-key id, an order number and a name) with
a serializer using ``SnowflakeIdField`` and ``OrderNumberSerializerField`` and with one
using DRF's ``BigIntegerField(coerce_to_string=True)``;
the two alternate in chunks of 500, and every figure is the median of ``--repeat`` runs.
Target: ours within 1.1x of DRF's.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.payloads import alternate, arguments, make_objects, setup_django

setup_django()

from rest_framework import serializers

from django_snowid.core.order_format import OrderNumberFormat
from django_snowid.drf import OrderNumberSerializerField, SnowflakeIdField

TARGET = 1.1


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
    args = arguments(__doc__)

    rows = make_objects(args.objects)
    # Same output, or the comparison means nothing.
    assert Ours(rows[:3], many=True).data == Drfs(rows[:3], many=True).data

    runs = {
        "ours": lambda chunk: Ours(chunk, many=True).data,
        "drf": lambda chunk: Drfs(chunk, many=True).data,
    }
    times = alternate(runs, rows, args.repeat)
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
