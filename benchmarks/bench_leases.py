"""Worker-id leases: acquisition time, and what the heartbeat costs next_id().

    python benchmarks/bench_leases.py [--acquisitions 200] [--seconds 1.0] [--repeat 3]

Needs Redis (127.0.0.1:6379) and PostgreSQL (127.0.0.1:5432). The heartbeat runs with a
0.3 s time-to-live (a renewal every 0.1 s, a hundred times more often than the default)
so that its cost, if any, shows.
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

from benchmarks.bench_ids import rate_single


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--acquisitions", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection

    from django_snowid.core.generator import SnowflakeGenerator
    from django_snowid.core.layout import PRESETS
    from django_snowid.leases.holder import lease_generator, release_all

    layout = PRESETS["classic"]
    old = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    figures: dict[str, float] = {}
    try:
        for source in ("redis", "database"):
            times = []
            for _ in range(args.acquisitions):
                start = time.perf_counter()
                lease_generator(layout, "bench", 0, source, heartbeat=False)
                times.append(time.perf_counter() - start)
                release_all()
            figures[f"acquire.{source}"] = statistics.median(times) * 1e6

        static = SnowflakeGenerator(layout, 5)
        leased = lease_generator(layout, "bench-beat", 0, "redis", ttl_s=0.3)
        plain_rates, leased_rates = [], []
        for _ in range(args.repeat):  # alternate so that drift hits both alike
            plain_rates.append(rate_single(static.next_id, args.seconds))
            leased_rates.append(rate_single(leased.next_id, args.seconds))
        figures["static"] = statistics.median(plain_rates)
        figures["leased"] = statistics.median(leased_rates)
        release_all()
    finally:
        connection.creation.destroy_test_db(old, verbosity=0)
        from django_redis import get_redis_connection

        client = get_redis_connection("snowid")
        from django.conf import settings

        keys = list(client.scan_iter(match=f"*{settings.SNOWID_REDIS_KEY_PREFIX}*"))
        if keys:
            client.delete(*keys)

    ratio = figures["leased"] / figures["static"]
    print(f"\n{'what':<56} {'figure':>14}")
    print("-" * 71)
    print(f"{'lease acquisition, Redis (median)':<56} {figures['acquire.redis']:>11,.0f} µs")
    print(
        f"{'lease acquisition, PostgreSQL (median)':<56} {figures['acquire.database']:>11,.0f} µs"
    )
    print(f"{'next_id(), static worker id':<56} {figures['static']:>12,.0f}/s")
    print(f"{'next_id(), Redis lease, heartbeat every 0.1 s':<56} {figures['leased']:>12,.0f}/s")
    print()
    print(
        f"[{'PASS' if ratio >= 0.95 else 'MISS'}] heartbeat keeps next_id() within 5% of static"
        f"{'':<6} {ratio:.3f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
