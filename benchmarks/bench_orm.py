"""ORM insert speed: SnowflakeAutoField against BigAutoField, measured in the same run.

Also the comparison users make: a UUIDField pk filled with UUIDv7 (uuid6.uuid7) or
UUIDv4 in Python, for bulk_create, a point lookup by pk and (PostgreSQL) the size of
the table and its pk index.

    python benchmarks/bench_orm.py [--db sqlite,postgresql,mariadb] [--rows 100000]
                                   [--creates 2000] [--repeat 5]

Each backend runs in a child process (Django is configured once per process). Every
figure is the median of --repeat runs; the runs of the compared models alternate so
that drift on a noisy machine hits them alike. A verdict is the median of each round's
ratio to its baseline's run of the same round (BigAutoField's, or the floor's), with the
range of those ratios.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_backend(rows: int, creates: int, repeat: int) -> dict[str, float]:
    import django

    django.setup()
    from django.db import connection

    from benchmarks.benchapp.models import AutoRow, NaiveRow, SnowRow, Uuid4Row, Uuid7Row
    from benchmarks.timing import interleaved_rates
    from django_snowid import next_ids

    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:

        def clear(model) -> None:
            with connection.cursor() as cursor:
                table = connection.ops.quote_name(model._meta.db_table)
                if connection.vendor == "sqlite":
                    cursor.execute(f"DELETE FROM {table}")
                else:
                    cursor.execute(f"TRUNCATE TABLE {table}")

        def bulk(model, preassigned: bool = False) -> float:
            clear(model)
            ids = next_ids(rows) if preassigned else None
            # A full collection now, not one triggered by chance inside the timed part
            # (100,000 new instances make each of those slow): less noise, same work.
            gc.collect()
            start = time.perf_counter()
            if ids:
                objs = [model(id=ids[i], name=f"row {i}", value=i) for i in range(rows)]
            else:
                objs = [model(name=f"row {i}", value=i) for i in range(rows)]
            model.objects.bulk_create(objs, batch_size=1000)
            elapsed = time.perf_counter() - start
            assert model.objects.count() == rows and objs[-1].pk is not None
            return rows / elapsed

        results: dict[str, list[float]] = {}
        runs = [
            ("bulk.AutoRow", lambda: bulk(AutoRow)),
            ("bulk.SnowRow", lambda: bulk(SnowRow)),
            ("bulk.NaiveRow", lambda: bulk(NaiveRow)),
            # The floor of any pk set in Python: ids made before the clock starts.
            ("bulk.floor", lambda: bulk(NaiveRow, preassigned=True)),
            ("bulk.Uuid7Row", lambda: bulk(Uuid7Row)),
            ("bulk.Uuid4Row", lambda: bulk(Uuid4Row)),
        ]
        for number in range(repeat):
            # The order rotates from one repeat to the next, as in interleaved_rates().
            for turn in range(len(runs)):
                key, run = runs[(number + turn) % len(runs)]
                results.setdefault(key, []).append(run())
            clear(AutoRow)
            clear(SnowRow)
            auto_rate, snow_rate = interleaved_rates(
                [
                    lambda i: AutoRow.objects.create(name=f"row {i}", value=i),
                    lambda i: SnowRow.objects.create(name=f"row {i}", value=i),
                ],
                creates,
            )
            results.setdefault("create.AutoRow", []).append(auto_rate)
            results.setdefault("create.SnowRow", []).append(snow_rate)
        medians = {key: statistics.median(values) for key, values in results.items()}
        sizes = sizes_and_lookups([AutoRow, SnowRow, Uuid7Row, Uuid4Row], bulk)
        return {**medians, **round_ratios(results), **sizes}
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


#: The verdicts' ratios: a kind's rate over its base's, each taken within one round.
PAIRS = {
    "bulk": ("bulk.SnowRow", "bulk.AutoRow"),
    "floor": ("bulk.floor", "bulk.AutoRow"),
    "bulk_over_floor": ("bulk.SnowRow", "bulk.floor"),
    "create": ("create.SnowRow", "create.AutoRow"),
}


def round_ratios(results: dict[str, list[float]]) -> dict[str, float]:
    """Each pair's ratio in every round: their median and range."""
    figures: dict[str, float] = {}
    for name, (kind, base) in PAIRS.items():
        ratios = [a / b for a, b in zip(results[kind], results[base], strict=True)]
        figures |= {
            f"ratio.{name}": statistics.median(ratios),
            f"low.{name}": min(ratios),
            f"high.{name}": max(ratios),
        }
    return figures


def sizes_and_lookups(models: list, bulk) -> dict[str, float]:
    """Each model filled with the same rows: its bytes (PostgreSQL) and pk lookups/s."""
    from django.db import connection

    from benchmarks.timing import interleaved_rates

    figures: dict[str, float] = {}
    keys = []
    for model in models:
        bulk(model)
        # The same 2,000 random rows of each table, looked up in a shuffled order.
        keys.append(list(model.objects.order_by("?").values_list("pk", flat=True)[:2000]))
        if connection.vendor == "postgresql":
            table = model._meta.db_table
            with connection.cursor() as cursor:
                cursor.execute(f"VACUUM ANALYZE {connection.ops.quote_name(table)}")
                cursor.execute(
                    "SELECT pg_relation_size(%s), pg_indexes_size(%s), pg_total_relation_size(%s)",
                    [table] * 3,
                )
                heap, index, total = cursor.fetchone()
            name = model.__name__
            figures |= {f"heap.{name}": heap, f"index.{name}": index, f"total.{name}": total}
    rates = interleaved_rates(
        [
            (lambda m, k: lambda i: m.objects.get(pk=k[i % len(k)]))(model, pks)
            for model, pks in zip(models, keys, strict=True)
        ],
        len(keys[0]) * 2,
    )
    figures |= {f"get.{m.__name__}": rate for m, rate in zip(models, rates, strict=True)}
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="sqlite,postgresql,mariadb")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--creates", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        print(json.dumps(run_backend(args.rows, args.creates, args.repeat)))
        return 0

    verdicts: list[tuple[str, bool | None, str]] = []
    for backend in args.db.split(","):
        env = {
            **os.environ,
            "SNOWID_BENCH_DB": backend,
            "DJANGO_SETTINGS_MODULE": "benchmarks.settings",
            "PYTHONPATH": str(ROOT),
        }
        done = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                backend,
                "--rows",
                str(args.rows),
                "--creates",
                str(args.creates),
                "--repeat",
                str(args.repeat),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
        )
        if done.returncode != 0:
            print(f"\n{backend}: NOT MEASURED\n{done.stderr.strip().splitlines()[-1]}")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        bulk_base, create_base = r["bulk.AutoRow"], r["create.AutoRow"]
        n, c = f"{args.rows:,}", f"{args.creates:,}"
        table = [
            (f"bulk_create {n} rows, batch 1000, BigAutoField", r["bulk.AutoRow"], bulk_base),
            (f"bulk_create {n} rows, batch 1000, SnowflakeAutoField", r["bulk.SnowRow"], bulk_base),
            (f"bulk_create {n} rows, naive Python default pk", r["bulk.NaiveRow"], bulk_base),
            ("bulk_create, pks assigned before timing (floor)", r["bulk.floor"], bulk_base),
            (f"{c} x create(), BigAutoField", r["create.AutoRow"], create_base),
            (f"{c} x create(), SnowflakeAutoField", r["create.SnowRow"], create_base),
        ]
        print(f"\n{backend}")
        print(f"  {'what':<58} {'rows/s':>10} {'x BigAutoField':>15}")
        print(f"  {'-' * 85}")
        for label, value, base in table:
            print(f"  {label:<58} {value:>10,.0f} {value / base:>14.2f}x")
        print_uuid_comparison(r, n)
        bulk_ratio, floor_ratio, over_floor, create_ratio = (
            r[f"ratio.{name}"] for name in ("bulk", "floor", "bulk_over_floor", "create")
        )
        # The targets are PostgreSQL's; SQLite and MariaDB are reported against the same.
        target = backend == "postgresql"
        verdicts.append(
            (
                f"{backend}: bulk_create >= 0.95x BigAutoField",
                bulk_ratio >= 0.95 if target else None,
                f"{bulk_ratio:.3f}x {spread(r, 'bulk')}, floor {floor_ratio:.3f}x "
                f"{spread(r, 'floor')}",
            )
        )
        # The floor: the same rows with pks made before the clock starts (no generator).
        verdicts.append(
            (
                f"{backend}: bulk_create >= 0.95x its floor",
                over_floor >= 0.95 if target else None,
                f"{over_floor:.3f}x {spread(r, 'bulk_over_floor')}",
            )
        )
        # "within 5% of the time" = at least 1/1.05 of the rate
        verdicts.append(
            (
                f"{backend}: create() within 5% of BigAutoField",
                create_ratio >= 1 / 1.05 if target else None,
                f"{create_ratio:.3f}x {spread(r, 'create')}",
            )
        )
    print()
    for label, ok, figure in verdicts:
        mark = "info" if ok is None else "PASS" if ok else "MISS"
        print(f"[{mark}] {label:<52} {figure}")
    return 0


def spread(r: dict[str, float], name: str) -> str:
    return f"({r[f'low.{name}']:.3f}-{r[f'high.{name}']:.3f})"


def print_uuid_comparison(r: dict[str, float], n: str) -> None:
    kinds = [
        ("BigAutoField", "AutoRow"),
        ("SnowflakeAutoField", "SnowRow"),
        ("UUIDField, UUIDv7 in Python", "Uuid7Row"),
        ("UUIDField, UUIDv4 in Python", "Uuid4Row"),
    ]
    sized = "total.AutoRow" in r
    print(f"\n  pk types, {n} rows (ratios x BigAutoField)")
    header = f"  {'pk':<30} {'bulk rows/s':>18} {'get(pk=)/s':>18}"
    if sized:
        header += f" {'table+index bytes':>24} {'pk index bytes':>22}"
    print(header)
    for label, name in kinds:
        bulk, get = r[f"bulk.{name}"], r[f"get.{name}"]
        line = (
            f"  {label:<30} {bulk:>10,.0f} {bulk / r['bulk.AutoRow']:>6.2f}x"
            f" {get:>10,.0f} {get / r['get.AutoRow']:>6.2f}x"
        )
        if sized:
            total, index = r[f"total.{name}"], r[f"index.{name}"]
            line += (
                f" {total:>15,.0f} {total / r['total.AutoRow']:>6.2f}x"
                f" {index:>13,.0f} {index / r['index.AutoRow']:>6.2f}x"
            )
        print(line)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
