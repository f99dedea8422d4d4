"""Worker-id leases: acquisition time under the default (database) next to Redis and
slot, what each source's lease costs next_id() next to a static worker id, and what the
horizon a holder records ahead costs.

    python benchmarks/bench_leases.py [--acquisitions 200] [--seconds 1.0] [--repeat 5]

Needs PostgreSQL (127.0.0.1:5432; SNOWID_BENCH_DB_NAME names its database) and
`redis-server` on the PATH: the Redis leases run on a server of the benchmark's own.
next_id() runs under each lease as deployed: a 30 s time-to-live, renewed every 10 s.
The database source on an SQLite file keeps its leases in lock files, the slot store's:
the slot row stands for it.

Horizon writes: a holder records its horizon ahead in the write that takes the lease, and
again before any tick past what the store records. A lock file frees a dead holder's id
at once, so its holder writes a second ahead: one write a second of issuing, printed as a
share of that second. A lease that lasts its time-to-live is recorded the time-to-live
ahead when it is taken (no write of its own) and kept ahead by the heartbeat; it writes
again only if the clock steps past that: what such a write (a renewal) costs is printed.
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
    from django_snowid.workers.lease import release_all
    from django_snowid.workers.leased import lease_generator, lease_of

    layout = PRESETS["classic"]
    old = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    figures: dict[str, float] = {}
    sources = ("database", "redis", "slot")
    ratios: dict[str, list[float]] = {source: [] for source in sources}
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

            # One horizon write, as the holder makes it (a renewal carrying the horizon).
            lease = lease_of(lease_generator(layout, 0, source, heartbeat=False))
            assert lease is not None
            writes = []
            for _ in range(args.acquisitions):
                start = time.perf_counter()
                lease.record_ahead()
                writes.append(time.perf_counter() - start)
            figures[f"write.{source}"] = statistics.median(writes) * 1e6
            release_all()

        static = SnowflakeGenerator(layout, 5)
        leased = {source: lease_generator(layout, 0, source) for source in sources}  # 30 s TTL
        calls = [("static", static.next_id)] + [(s, g.next_id) for s, g in leased.items()]
        spent = dict.fromkeys(rates_of := [name for name, _ in calls], 0.0)
        # Short chunks in rotating order (drift on these machines hits every call alike),
        # for --seconds a call and repeat; a ratio per repeat, from its chunks.
        chunks = max(1, int(args.seconds / 0.02))
        per_chunk = 40_000  # about 20 ms of next_id()
        for repeat in range(args.repeat):
            this = dict.fromkeys(rates_of, 0.0)
            for chunk in range(chunks):
                turn = (repeat * chunks + chunk) % len(calls)
                for name, call in calls[turn:] + calls[:turn]:
                    start = time.perf_counter()
                    for _ in range(per_chunk):
                        call()
                    this[name] += time.perf_counter() - start
            for source in sources:
                ratios[source].append(this["static"] / this[source])
            for name in rates_of:
                spent[name] += this[name]
        for name in rates_of:
            figures[f"next_id.{name}"] = args.repeat * chunks * per_chunk / spent[name]
        release_all()
    finally:
        connection.creation.destroy_test_db(old, verbosity=0)
        own_caches.disable()
        own_redis.__exit__(None, None, None)

    default = figures["acquire.database"]
    print(f"\n{'what':<60} {'figure':>14} {'ratio':>9}")
    print("-" * 85)
    labels = {
        "database": "database (default; PostgreSQL table)",
        "redis": "Redis",
        "slot": "slot (lock file; also SQLite's database source)",
    }
    for source in sources:
        value = figures[f"acquire.{source}"]
        label = f"lease acquisition, {labels[source]}, median"
        print(f"{label:<60} {value:>11,.0f} µs {value / default:>8.2f}x")
    plain = figures["next_id.static"]
    print(f"{'next_id(), static worker id':<60} {plain:>12,.0f}/s {1:>8.2f}x")
    for source in sources:
        label = f"next_id(), {labels[source]} lease"
        value = figures[f"next_id.{source}"]
        spread = ratios[source]
        print(
            f"{label:<60} {value:>12,.0f}/s {statistics.median(spread):>8.3f}x"
            f"  (paired repeats {min(spread):.3f}-{max(spread):.3f})"
        )
    print()
    print("Horizon writes (median of one write):")
    write = figures["write.slot"]
    label = "slot: one a second of issuing; share of that second"
    print(f"  {label:<58} {write:>11,.0f} µs {write / 1e6:>8.6f}x")
    for source in ("database", "redis"):
        write = figures[f"write.{source}"]
        label = f"{source}: none beyond the acquisition's; one past a clock step"
        print(f"  {label:<58} {write:>11,.0f} µs")
    print()
    ratio = statistics.median(ratios["database"])
    print(
        f"[{'PASS' if ratio >= 0.99 else 'MISS'}] the default lease keeps next_id() within 1% "
        f"of a static worker id: median paired ratio {ratio:.3f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
