"""Named sequences: the Redis path and the database path against their baselines.

    python benchmarks/bench_sequences.py [--calls 10000] [--repeat 3]

Needs Redis (127.0.0.1:6379) and PostgreSQL (127.0.0.1:5432). Baselines, measured in the
same run, interleaved with what they are compared to:

- a bare redis-py ``EVALSHA`` of the simplest script (HGET max, HINCRBY cur), against
  ``next_value(name)`` on the Redis store (one process);
- django-sequences ``get_next_value()`` on PostgreSQL, against ``next_value(name)`` on the
  database store and against ``next_number()`` of the order-number database store (all in
  autocommit: one committed statement a value).

``--database-only`` skips the Redis rows.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
os.environ.setdefault("SNOWID_BENCH_DB", "postgresql")

from benchmarks.timing import interleaved_rates

# The simplest Redis sequence: refuse past the mark, else increment.
SEED_LUA = """
local mx = tonumber(redis.call('HGET', KEYS[1], 'max'))
local cur = tonumber(redis.call('HGET', KEYS[1], 'cur'))
if cur >= mx then return -1 end
return redis.call('HINCRBY', KEYS[1], 'cur', 1)
"""


def verdict(ratio: float, target: float) -> str:
    return "ok" if ratio >= target else "MISS"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database-only", action="store_true", help="skip the Redis rows")
    args = parser.parse_args()

    import django

    django.setup()
    import time

    from django.db import connection
    from django.test import override_settings
    from django_redis import get_redis_connection
    from sequences import get_next_value

    from django_snowid.core.order_format import OrderNumberFormat
    from django_snowid.db.connections import close_own_connections
    from django_snowid.orders.issuer import StreamIssuer
    from django_snowid.orders.recovery import recover_stream
    from django_snowid.sequences import next_value, next_values

    # A database of this run's own: other benchmarks may be using "test_snowid_bench".
    connection.settings_dict["NAME"] = f"snowid_bench_seq_{os.getpid()}"
    old = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    prefix = os.environ["SNOWID_BENCH_PREFIX"]
    client = get_redis_connection("snowid")
    try:
        seed_key = f"{{{prefix}:seed}}"
        client.hset(seed_key, mapping={"cur": 0, "max": 10**15})
        sha = client.script_load(SEED_LUA)
        redis_ratios: list[float] = []
        redis_ours: list[float] = []
        redis_bare: list[float] = []
        block_rates: list[float] = []
        db_ratios: list[float] = []
        db_ours: list[float] = []
        db_theirs: list[float] = []
        order_ratios: list[float] = []
        order_ours: list[float] = []
        with override_settings(SNOWID_SEQUENCE_BACKEND="redis"):
            next_value("bench")  # first raise, script load
            for _ in range(0 if args.database_only else args.repeat):
                ours, bare = interleaved_rates(
                    [lambda i: next_value("bench"), lambda i: client.evalsha(sha, 1, seed_key)],
                    args.calls,
                )
                redis_ours.append(ours)
                redis_bare.append(bare)
                redis_ratios.append(ours / bare)
                began = time.perf_counter()
                blocks = max(args.calls // 20, 100)
                for _ in range(blocks):
                    next_values("blocks", 1000)
                block_rates.append(blocks * 1000 / (time.perf_counter() - began))
        with override_settings(SNOWID_SEQUENCE_BACKEND="database", SNOWID_ORDER_BACKEND="database"):
            next_value("bench-db")
            get_next_value("bench-db")
            fmt = OrderNumberFormat()  # 16,383 a second: more than the database store reaches
            recover_stream("bench-db", fmt, [])  # the stream's row
            issuer = StreamIssuer("bench-db", fmt)
            issuer.next_number()
            for _ in range(args.repeat):
                ours, theirs, orders = interleaved_rates(
                    [
                        lambda i: next_value("bench-db"),
                        lambda i: get_next_value("bench-db"),
                        lambda i: issuer.next_number(i & 15),
                    ],
                    max(args.calls // 4, 100),
                )
                db_ours.append(ours)
                db_theirs.append(theirs)
                db_ratios.append(ours / theirs)
                order_ours.append(orders)
                order_ratios.append(orders / theirs)
    finally:
        keys = list(client.scan_iter(match=f"{{{prefix}:*"))
        if keys:
            client.delete(*keys)
        close_own_connections()
        connection.creation.destroy_test_db(old, verbosity=0)

    med = statistics.median
    print(f"named sequences and order numbers, {args.repeat} runs (median; min-max of the ratios)")
    if not args.database_only:
        print_redis_rows(redis_ours, redis_bare, redis_ratios, block_rates)
    print(
        f"{connection.vendor} next_value:   {med(db_ours):10,.0f}/s   django-sequences: "
        f"{med(db_theirs):10,.0f}/s   ratio {med(db_ratios):.3f} "
        f"({min(db_ratios):.3f}-{max(db_ratios):.3f})  target >= 1.0: "
        f"{verdict(med(db_ratios), 1.0)}"
    )
    print(
        f"{connection.vendor} next_number:  {med(order_ours):10,.0f}/s   django-sequences: "
        f"{med(db_theirs):10,.0f}/s   ratio {med(order_ratios):.3f} "
        f"({min(order_ratios):.3f}-{max(order_ratios):.3f})  target >= 1.0: "
        f"{verdict(med(order_ratios), 1.0)}"
    )
    return 0


def print_redis_rows(
    ours: list[float], bare: list[float], ratios: list[float], blocks: list[float]
) -> None:
    med = statistics.median
    print(
        f"redis  next_value:        {med(ours):10,.0f}/s   bare EVALSHA: "
        f"{med(bare):10,.0f}/s   ratio {med(ratios):.3f} "
        f"({min(ratios):.3f}-{max(ratios):.3f})  target >= 1.0: {verdict(med(ratios), 1.0)}"
    )
    print(
        f"redis  next_values(1000): {med(blocks):10,.0f} values/s   target >= 1,000,000: "
        f"{verdict(med(blocks), 1_000_000)}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
