"""Worker-id leases: acquisition time under the default (database) next to Redis and
slot, and what the default lease's heartbeat costs next_id() next to a static worker id.

    python benchmarks/bench_leases.py [--acquisitions 200] [--seconds 1.0] [--repeat 5]

Needs PostgreSQL (127.0.0.1:5432; SNOWID_BENCH_DB_NAME names its database) and
`redis-server` on the PATH: the Redis leases run on a server of the benchmark's own.
next_id() runs under the default lease as deployed: a 30 s time-to-live, renewed every
10 s on a connection of its own.
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
from benchmarks.servers import OwnRedis


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--acquisitions", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection
    from django.test import override_settings

    from django_snowid.core.generator import SnowflakeGenerator
    from django_snowid.core.layout import PRESETS
    from django_snowid.workers.lease import lease_generator, release_all

    layout = PRESETS["classic"]
    old = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    figures: dict[str, float] = {}
    sources = ("database", "redis", "slot")
    # Redis leases are keyed by their pool only (no key prefix): a server of our own, so
    # that the benchmark never meets another deployment's leases.
    own_redis = OwnRedis().__enter__()
    redis_url = f"redis://127.0.0.1:{own_redis.port}/0"
    own_caches = override_settings(
        CACHES={"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": redis_url},
                "snowid": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": redis_url}}
    )  # fmt: skip
    own_caches.enable()
    try:
        for source in sources:
            # A new Redis pool is not trusted for one time-to-live plus margin (it cannot
            # tell "never had records" from "lost them"): take that wait before timing.
            lease_generator(layout, 0, source, heartbeat=False, ttl_s=0.3)
            release_all()
            times = []
            for _ in range(args.acquisitions):
                start = time.perf_counter()
                lease_generator(layout, 0, source, heartbeat=False, ttl_s=0.3)
                times.append(time.perf_counter() - start)
                release_all()
            figures[f"acquire.{source}"] = statistics.median(times) * 1e6

        static = SnowflakeGenerator(layout, 5)
        leased = lease_generator(layout, 0, "database")  # the default TTL
        ratios, plain_rates, leased_rates = [], [], []
        for repeat in range(args.repeat):  # alternate (and rotate) so drift hits both alike
            pair = [(static.next_id, plain_rates), (leased.next_id, leased_rates)]
            for call, rates in pair if repeat % 2 == 0 else pair[::-1]:
                rates.append(rate_single(call, args.seconds))
            ratios.append(leased_rates[-1] / plain_rates[-1])
        figures["static"] = statistics.median(plain_rates)
        figures["leased"] = statistics.median(leased_rates)
        release_all()
    finally:
        connection.creation.destroy_test_db(old, verbosity=0)
        own_caches.disable()
        own_redis.__exit__(None, None, None)

    ratio = statistics.median(ratios)
    default = figures["acquire.database"]
    print(f"\n{'what':<56} {'figure':>14} {'ratio':>8}")
    print("-" * 80)
    for source, label in (
        ("database", "lease acquisition, database (default; PostgreSQL), median"),
        ("redis", "lease acquisition, Redis, median"),
        ("slot", "lease acquisition, slot (lock file), median"),
    ):
        value = figures[f"acquire.{source}"]
        print(f"{label:<56} {value:>11,.0f} µs {value / default:>7.2f}x")
    print(f"{'next_id(), static worker id':<56} {figures['static']:>12,.0f}/s {1:>7.2f}x")
    print(
        f"{'next_id(), database lease (default, beat every 10 s)':<56} "
        f"{figures['leased']:>12,.0f}/s {figures['leased'] / figures['static']:>7.3f}x"
    )
    print()
    spread = f"(repeats {min(ratios):.3f}-{max(ratios):.3f})"
    print(
        f"[{'PASS' if ratio >= 0.99 else 'MISS'}] the default lease keeps next_id() within 1% "
        f"of a static worker id: median paired ratio {ratio:.3f}x {spread}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
