"""``manage.py snowid_audit`` over a large table on PostgreSQL: time, rows/s and memory.

    python benchmarks/bench_audit.py [--rows 10000000] [--batch-size 10000]

Fills a Snowflake primary key column of its own database (created and dropped here) with
``--rows`` ids made by ``generate_series`` in SQL (1,000 ids a millisecond from one worker,
all in the past), then measures, in the same run:

- ``SELECT count(*)``: the server reading the table, nothing sent to Python;
- one keyset pass (``django_snowid.audit.scan.column_values``): every row sent to Python
  in the batches the audit reads, no check made: the cost of reading alone;
- ``snowid_audit --model benchapp.SnowRow``: the same pass with every check.

The passes run ``--repeat`` times (default 5), in rotating order; medians are compared,
and the goal (the audit within 1.5x the keyset pass) is read on each round's own ratio:
their median and range show how much of a miss is noise.
Memory: the peak resident size of this process (``ru_maxrss``) after the fill and after
each pass; it stays flat as the table grows when reading is batched. Then a pass of
``--traced-rows`` rows (default 200,000) under ``tracemalloc`` gives the peak of Python
allocations of the reading and of the audit (``tracemalloc`` slows Python down several
times, so it is not on the timed passes).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"  # its own app and database
os.environ["SNOWID_BENCH_DB"] = "postgresql"


#: The audit's time against the keyset pass's.
GOAL = 1.5


def rss_mib() -> float:
    """The peak resident size of this process so far (Linux: KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--batch-size", type=int, default=10_000)
    parser.add_argument("--traced-rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5, help="rounds of the timed passes")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from benchmarks.benchapp.models import SnowRow
    from django_snowid.audit.scan import column_values
    from django_snowid.settings_layouts import get_layout

    connection.settings_dict["NAME"] = f"snowid_bench_audit_{os.getpid()}"
    old = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        layout = get_layout(None)
        field = SnowRow._meta.pk
        table = connection.ops.quote_name(SnowRow._meta.db_table)
        first_tick = layout.tick_at(django.utils.timezone.now()) - 86_400_000

        def fill(count: int) -> float:
            started = time.perf_counter()
            with connection.cursor() as cursor:
                cursor.execute(f"TRUNCATE {table}")
                cursor.execute(
                    f"INSERT INTO {table} (id, name, value) "
                    f"SELECT ((%s + g / 1000) << {layout.time_shift}) "
                    f"| (3::bigint << {layout.node_shift}) | ((g %% 1000) << {layout.shard_bits}),"
                    " '', 0 FROM generate_series(0, %s - 1) AS g",
                    [first_tick, count],
                )
                cursor.execute(f"VACUUM ANALYZE {table}")
            return time.perf_counter() - started

        def count_star() -> float:
            started = time.perf_counter()
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT count(*) FROM {table}")
                (counted,) = cursor.fetchone()
            assert counted == rows, counted
            return time.perf_counter() - started

        def keyset_pass(limit: int | None = None) -> float:
            started = time.perf_counter()
            read = 0
            for _ in column_values(field, batch_size=args.batch_size):
                read += 1
                if limit is not None and read >= limit:
                    break
            assert limit is not None or read == rows, read
            return time.perf_counter() - started

        def audit() -> float:
            out = io.StringIO()
            started = time.perf_counter()
            call_command(
                "snowid_audit",
                "--model",
                "benchapp.SnowRow",
                "--json",
                "--batch-size",
                str(args.batch_size),
                stdout=out,
            )
            seconds = time.perf_counter() - started
            report = json.loads(out.getvalue())
            assert report["ok"] and report["rows"]["benchapp.SnowRow.id"] == rows, report
            return seconds

        rows = args.rows
        print(f"snowid_audit on PostgreSQL: {rows:,} rows, batches of {args.batch_size:,}")
        print(f"  layout {layout.name}: {layout.describe()}")
        filled = fill(rows)
        print(f"  filled in {filled:.1f} s (generate_series); peak RSS {rss_mib():.0f} MiB")
        print(f"  load average before: {os.getloadavg()[0]:.1f} (2 cores are shared)")
        print()
        passes = [
            ("SELECT count(*) (server only)", count_star),
            ("keyset pass, no check (reading alone)", keyset_pass),
            ("snowid_audit (every check)", audit),
        ]
        # Each round runs every pass, in an order that rotates: load from other work hits
        # them alike. The medians are compared.
        spent: list[list[float]] = [[] for _ in passes]
        for round_ in range(args.repeat):
            for turn in range(len(passes)):
                index = (round_ + turn) % len(passes)
                spent[index].append(passes[index][1]())
        medians = [statistics.median(times) for times in spent]
        print(f"  {'what':<40} {'median s':>9} {'range s':>13} {'rows/s':>12} {'x audit':>8} ")
        for (what, _), times, median in zip(passes, spent, medians, strict=True):
            print(
                f"  {what:<40} {median:9.2f} {min(times):6.2f}-{max(times):<6.2f} "
                f"{rows / median:12,.0f} {medians[-1] / median:8.2f}"
            )
        print(f"  (median of {args.repeat}; load average after: {os.getloadavg()[0]:.1f})")
        ratios = [audited / read for read, audited in zip(spent[1], spent[2], strict=True)]
        ratio = statistics.median(ratios)
        print(
            f"  goal: snowid_audit within {GOAL}x the keyset pass, each round's ratio: median "
            f"{ratio:.2f} ({min(ratios):.2f}-{max(ratios):.2f}) {'ok' if ratio <= GOAL else 'MISS'}"
        )
        print(f"  peak RSS after every pass: {rss_mib():.0f} MiB")
        traced = min(args.traced_rows, rows)
        tracemalloc.start()
        keyset_pass(traced)
        reading_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        tracemalloc.start()
        fill(traced)
        rows = traced
        tracemalloc.reset_peak()
        audit()
        audit_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print()
        print(f"  tracemalloc peak over {traced:,} rows (batches of {args.batch_size:,}):")
        print(f"    keyset pass  {reading_peak / 2**20:8.1f} MiB")
        print(f"    snowid_audit {audit_peak / 2**20:8.1f} MiB")
    finally:
        connection.creation.destroy_test_db(old, verbosity=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
