"""Concealed order numbers: their cost next to plain ones, measured in the same run.

    python benchmarks/bench_conceal.py [--creates 3000] [--repeat 3] [--numbers 200000]

Needs Redis (127.0.0.1:6379, or SNOWID_BENCH_REDIS_URL) and PostgreSQL (127.0.0.1:5432).
Three figures:

- ``create()`` of a row with a concealed ``OrderNumberField`` against the same model with
  a plain one, each on a stream of its own, in interleaved chunks (target: <= 1.02x);
- the issuer alone (one Redis round trip a number), concealed against plain;
- the cipher alone: a number's permutation in a busy second, and a second's round tables
  (paid once per second a process issues in), for the binary and the decimal default;
- the memory a format's round tables hold (tracemalloc) after a process issued in 255
  different seconds (about four minutes of steady sales), next to the same tables kept as
  tuples of Python ints for 256 seconds, as earlier releases kept them (target: <= 2 MiB).

The ratios compare across machines where the absolute speeds do not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
os.environ.setdefault("SNOWID_BENCH_DB", "postgresql")


def cipher_costs(numbers: int) -> list[tuple[str, float]]:
    """Microseconds a number (and a second's tables) costs the cipher alone."""
    from django_snowid.core.key_schedule import KeySchedule
    from django_snowid.core.order_format import OrderNumberFormat

    keys = KeySchedule.parse("benchmark-key-of-concealed-order-numbers")
    rows = []
    for packing in ("binary", "decimal"):
        fmt = OrderNumberFormat(packing=packing, conceal=True, keys=keys)
        cipher = fmt.cipher
        assert cipher is not None
        second = 1_900_000_000
        cap = fmt.max_sequence
        cipher.conceal(second, 1)
        start = time.perf_counter()
        for i in range(numbers):
            cipher.conceal(second, i % cap + 1)
        rows.append((f"{packing}: conceal one number (busy second)", _us(start, numbers)))
        start = time.perf_counter()
        for i in range(numbers):
            cipher.reveal(second, i % cap + 1)
        rows.append((f"{packing}: reveal one number", _us(start, numbers)))
        tables = 300
        start = time.perf_counter()
        for s in range(tables):
            cipher._make(second + s)
        rows.append((f"{packing}: round tables of a new second", _us(start, tables)))
    return rows


#: The formats whose tables' memory is measured: the defaults, and the largest tables.
MEMORY_FORMATS = {
    "binary, 14 sequence bits (default)": {"packing": "binary"},
    "decimal, 5 sequence digits (default)": {"packing": "decimal"},
    "binary, 20 sequence bits": {"packing": "binary", "sequence_bits": 20, "shard_bits": 2},
    "decimal, 7 sequence digits": {"packing": "decimal", "sequence_digits": 7, "shard_digits": 0},
}


def table_memory(seconds: int) -> list[tuple[str, float, float]]:
    """MiB of round tables held after numbers of ``seconds`` different seconds: this
    version's cipher, and the same tables as tuples of ints kept for every second."""
    import gc
    import tracemalloc

    from django_snowid.core.key_schedule import KeySchedule
    from django_snowid.core.order_format import OrderNumberFormat

    keys = KeySchedule.parse("benchmark-key-of-concealed-order-numbers")
    rows = []
    for label, options in MEMORY_FORMATS.items():
        fmt = OrderNumberFormat(conceal=True, keys=keys, **options)  # type: ignore[arg-type]
        cipher = fmt.cipher
        assert cipher is not None
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for second in range(1_900_000_000, 1_900_000_000 + seconds):
            cipher.conceal(second, 1)
        ours = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        kept = {}
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for second in range(1_900_000_000, 1_900_000_000 + seconds):
            kept[second] = [tuple(int(v) for v in table) for table, _ in cipher._make(second)]
        as_tuples = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        del kept
        rows.append((label, ours / 2**20, as_tuples / 2**20))
    return rows


def _us(start: float, count: int) -> float:
    return (time.perf_counter() - start) / count * 1e6


def database_part(creates: int, repeat: int) -> dict[str, float]:
    from django.db import connection

    old = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        from benchmarks.benchapp.models import ConcealedOrder, NumberedOrder
        from benchmarks.timing import interleaved_rates

        NumberedOrder.objects.create(user_id=0)  # recovery, script loading
        ConcealedOrder.objects.create(user_id=0)
        plain_issuer = NumberedOrder._meta.get_field("number").issuer()
        concealed_issuer = ConcealedOrder._meta.get_field("number").issuer()
        results: dict[str, list[float]] = {}
        for _ in range(repeat):
            plain, concealed = interleaved_rates(
                [
                    lambda i: NumberedOrder.objects.create(user_id=i),
                    lambda i: ConcealedOrder.objects.create(user_id=i),
                ],
                creates,
            )
            results.setdefault("plain", []).append(plain)
            results.setdefault("create_x", []).append(plain / concealed)
            plain, concealed = interleaved_rates(
                [
                    lambda i: plain_issuer.next_number(i),
                    lambda i: concealed_issuer.next_number(i),
                ],
                creates,
            )
            results.setdefault("issuer_plain", []).append(plain)
            results.setdefault("issuer_x", []).append(plain / concealed)
        return {k: statistics.median(v) for k, v in results.items()}
    finally:
        connection.creation.destroy_test_db(old, verbosity=0)


def report(
    backend: str,
    db: dict[str, float],
    costs: list[tuple[str, float]],
    memory: list[tuple[str, float, float]],
    seconds: int,
) -> None:
    print(f"Concealed order numbers (SNOWID_BENCH_DB={backend}, Redis store)")
    print(f"{'':<52} {'calls/s':>12} {'time x':>9}")
    print(f"{'create(), plain OrderNumberField':<52} {db['plain']:>12,.0f} {1.0:>8.3f}x")
    print(
        f"{'create(), OrderNumberField(conceal=True)':<52} "
        f"{db['plain'] / db['create_x']:>12,.0f} {db['create_x']:>8.3f}x"
    )
    print(f"{'issuer.next_number(), plain':<52} {db['issuer_plain']:>12,.0f} {1.0:>8.3f}x")
    print(
        f"{'issuer.next_number(), concealed':<52} "
        f"{db['issuer_plain'] / db['issuer_x']:>12,.0f} {db['issuer_x']:>8.3f}x"
    )
    print()
    print(f"{'the cipher alone':<52} {'us each':>12}")
    for label, us in costs:
        print(f"{label:<52} {us:>12.2f}")
    print()
    print(f"round tables after {seconds} seconds, MiB{'':<17} {'ours':>12} {'as tuples':>9}")
    for label, ours, as_tuples in memory:
        print(f"{label:<52} {ours:>12.2f} {as_tuples:>9.1f}")
    print()
    verdict = "met" if db["create_x"] <= 1.02 else "NOT met"
    print(f"target create() time <= 1.02x without concealing: {verdict} ({db['create_x']:.3f}x)")
    largest = max(ours for _, ours, _ in memory)
    verdict = "met" if largest <= 2 else "NOT met"
    print(f"target round tables <= 2 MiB per format and process: {verdict} ({largest:.2f} MiB)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--creates", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--numbers", type=int, default=200_000)
    parser.add_argument("--seconds", type=int, default=255, help="for the tables' memory")
    args = parser.parse_args()
    import django

    django.setup()
    import redis
    from django.conf import settings

    client = redis.Redis.from_url(settings.REDIS_URL)
    prefix = settings.SNOWID_REDIS_KEY_PREFIX
    try:
        costs = cipher_costs(args.numbers)
        memory = table_memory(args.seconds)
        db = database_part(args.creates, args.repeat)
    finally:
        keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
        if keys:
            client.delete(*keys)

    report(settings.BACKEND, db, costs, memory, args.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
