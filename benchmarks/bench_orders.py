"""Order-number speed, next to baselines measured in the same run.

    python benchmarks/bench_orders.py [--seconds 1.0] [--repeat 3]

Needs Redis (127.0.0.1:6379, or SNOWID_BENCH_REDIS_URL) and PostgreSQL (127.0.0.1:5432).
Baselines: a raw EVALSHA round trip on a plain socket (the floor of any Redis-backed
number) and the seeds' scheme (redis-py EVALSHA of INCR + PEXPIRE on a per-second key,
then formatting). The throughput rows use a 19-bit sequence (524,287 numbers a second)
so that the per-second cap of the default 14 bits (16,383) does not stop them: the cap is
a limit of the format, not of the code. Keys are this run's own and deleted at the end.

On PostgreSQL, ``create()`` and ``bulk_create()`` of a model with an ``OrderNumberField``
are timed against the same calls on the same table without it, interleaved in one run
(the bulks' field has a 19-bit sequence: back to back they pass the 16,383 numbers a
second of the default format, whose waits for the next second are its limit, not the
cost of the code; the run prints how many waits there were):
the ratios compare across versions of the code where absolute speeds do not. Their floor:
the same calls on a table whose UNIQUE bigint column is set in Python to values shaped
like the numbers, made before the timing (the column's and the index's cost, no number
drawn: 19-digit values with a shard in the low bits cost PostgreSQL and psycopg more than
small consecutive ones). The ``create()`` and ``bulk_create()`` ratios are taken
``--create-rounds`` and ``--bulk-rounds`` times (default 7 each): their median and range
show how much of a miss is noise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import socket
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
os.environ.setdefault("SNOWID_BENCH_DB", "postgresql")

SEED_LUA = """
local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], 5000)
return n
"""


def spread_of(values: list[float], digits: int = 2) -> str:
    return f"{min(values):.{digits}f}-{max(values):.{digits}f}"


def setup_django() -> None:
    import django

    django.setup()


def rate(call: Callable[[], object], seconds: float) -> float:
    count, start = 0, time.perf_counter()
    while True:
        for _ in range(100):
            call()
        count += 100
        now = time.perf_counter()
        if now - start >= seconds:
            return count / (now - start)


# ------------------------------------------------------------------ baselines
class RawEvalsha:
    """EVALSHA of 'return 1' over a bare socket: one round trip, nothing else."""

    def __init__(self, host: str, port: int) -> None:
        import redis

        sha = redis.Redis(host=host, port=port).script_load("return 1")
        self.sock = socket.create_connection((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.request = f"*3\r\n$7\r\nEVALSHA\r\n$40\r\n{sha}\r\n$1\r\n0\r\n".encode()

    def __call__(self) -> None:
        self.sock.sendall(self.request)
        reply = self.sock.recv(64)
        if reply != b":1\r\n":  # a part or an error: the next call would not wait its turn
            raise RuntimeError(f"EVALSHA answered {reply!r}, not :1")


class SeedScheme:
    """The seeds: per-second key, INCR + PEXPIRE in one EVALSHA, then the number."""

    def __init__(self, client, prefix: str) -> None:
        self.script = client.register_script(SEED_LUA)
        self.prefix = prefix

    def __call__(self, uid: int = 1820) -> int:
        stem = time.strftime("%y%m%d%H%M%S", time.gmtime())
        sequence = self.script(keys=[f"{self.prefix}:seed:{stem}"])
        return (int(stem) << 18) | (sequence << 4) | (uid & 15)


def redis_client():
    import redis

    return redis.Redis.from_url(
        os.environ.get("SNOWID_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
    )


def issuer_for(stream: str, fmt):
    """A recovered issuer of ``stream`` (no field: the stream has no rows)."""
    from django_snowid.orders.issuer import StreamIssuer
    from django_snowid.orders.recovery import recover_stream

    recover_stream(stream, fmt, [])
    return StreamIssuer(stream, fmt)


def wide_issuer(stream: str):
    from django_snowid.core.order_format import OrderNumberFormat

    return issuer_for(stream, OrderNumberFormat(sequence_bits=19, shard_bits=4))


# -------------------------------------------------------- multi-process worker
def _worker(job: tuple[str, float, float]) -> int:
    kind, start_at, seconds = job
    setup_django()
    from django.conf import settings

    if kind == "seed":
        call: Callable[[], object] = SeedScheme(redis_client(), settings.SNOWID_REDIS_KEY_PREFIX)
    else:
        issuer = wide_issuer("bench-multi")
        call = lambda: issuer.next_number(12)  # noqa: E731
    call()
    while time.time() < start_at:
        time.sleep(0.001)
    count, end = 0, start_at + seconds
    while time.time() < end:
        for _ in range(50):
            call()
        count += 50
    return count


def multi(kind: str, seconds: float, processes: int = 4) -> float:
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes) as pool:
        start_at = time.time() + 3.0  # time for every child to start and warm up
        counts = pool.map(_worker, [(kind, start_at, seconds)] * processes)
    return sum(counts) / seconds


# -------------------------------------------------------------- database part
BULK = 100  # rows a bulk_create()


def count_waits(issuer, results: dict[str, list[float]]) -> None:
    """Count in ``results["waits"]`` the seconds ``issuer`` waits for a next second."""
    sleep = issuer.sleep

    def counted(seconds: float) -> None:
        results.setdefault("waits", []).append(seconds)
        sleep(seconds)

    issuer.sleep = counted


def shaped_like_numbers(fmt, count: int) -> Iterator[int]:
    """``count`` increasing values shaped like ``fmt``'s numbers (this second's stem, the
    shards of users 0..BULK-1 in turn), made before the timing: the baseline's UNIQUE column
    stores what the field stores (19 digits, a shard in the low bits), drawn from no store."""
    second, cap, shards = fmt.local_second(datetime.now(UTC)), fmt.max_sequence, fmt.shard_count
    return iter(
        [fmt.compose(second + i // cap, 1 + i % cap, i % BULK % shards) for i in range(count)]
    )


def database_part(
    creates: int, repeat: int, raw: RawEvalsha, *, create_rounds: int, bulk_rounds: int
) -> dict[str, list[float]]:
    """create() and bulk_create() with order numbers, as time ratios to the same calls on
    the same table without the field, measured in interleaved chunks of one run: each
    figure's value in every round."""
    from django.db import connection

    # A database of this run's own: other benchmarks may be using "test_snowid_bench".
    connection.settings_dict["NAME"] = f"snowid_bench_orders_{os.getpid()}"
    old = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        from django.test import override_settings
        from sequences import get_next_value

        from benchmarks.benchapp.models import (
            NumberedOrder,
            PlainOrder,
            UniqueColumnOrder,
            WideNumberedOrder,
        )
        from benchmarks.timing import interleaved_rates
        from django_snowid.core.order_format import OrderNumberFormat

        results: dict[str, list[float]] = {}
        for model in (NumberedOrder, WideNumberedOrder):
            model.objects.create(user_id=0)  # recovery, script loading
            count_waits(model._meta.get_field("number").issuer(), results)

        def plain_after_round_trip(i: int) -> None:
            raw()  # the floor of any number drawn from Redis before the INSERT
            PlainOrder.objects.create(user_id=i)

        def plain_bulk(i: int) -> None:
            PlainOrder.objects.bulk_create([PlainOrder(user_id=u) for u in range(BULK)])

        def numbered_bulk(i: int) -> None:
            WideNumberedOrder.objects.bulk_create(
                [WideNumberedOrder(user_id=u) for u in range(BULK)]
            )

        bulks = max(creates // 20, 10)  # a round of 3 x 150 bulks takes about 1 s
        unique_numbers = shaped_like_numbers(
            WideNumberedOrder._meta.get_field("number").format,
            creates * create_rounds + bulk_rounds * bulks * BULK,
        )

        def unique_bulk(i: int) -> None:
            UniqueColumnOrder.objects.bulk_create(
                [UniqueColumnOrder(user_id=u, number=next(unique_numbers)) for u in range(BULK)]
            )

        def unique_column(i: int) -> None:
            UniqueColumnOrder.objects.create(user_id=i, number=next(unique_numbers))

        for _ in range(create_rounds):
            plain, floor, numbered, unique = interleaved_rates(
                [
                    lambda i: PlainOrder.objects.create(user_id=i),
                    plain_after_round_trip,
                    lambda i: NumberedOrder.objects.create(user_id=i),
                    unique_column,
                ],
                creates,
            )
            results.setdefault("unique_x", []).append(plain / unique)
            # Time ratios to the plain create() of the same run (rates are calls/s).
            results.setdefault("plain", []).append(creates / plain)  # seconds in all
            results.setdefault("floor_x", []).append(plain / floor)
            results.setdefault("numbered_x", []).append(plain / numbered)
            results.setdefault("create_over_unique", []).append(unique / numbered)
        for _ in range(bulk_rounds):
            plain_b, unique_b, numbered_b = interleaved_rates(
                [plain_bulk, unique_bulk, numbered_bulk], bulks, chunk=5
            )
            results.setdefault("bulk_rows", []).append(plain_b * BULK)  # rows/s
            results.setdefault("bulk_x", []).append(plain_b / numbered_b)
            results.setdefault("bulk_unique_x", []).append(plain_b / unique_b)
            results.setdefault("bulk_over_unique", []).append(unique_b / numbered_b)
        with override_settings(SNOWID_ORDER_BACKEND="database"):
            issuer = issuer_for("bench-db", OrderNumberFormat())
            for _ in range(repeat):
                ours, theirs = interleaved_rates(
                    [lambda i: issuer.next_number(i & 15), lambda i: get_next_value("bench")],
                    creates,
                )
                results.setdefault("db_store", []).append(ours)
                results.setdefault("sequences", []).append(theirs)
        return results
    finally:
        connection.creation.destroy_test_db(old, verbosity=0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--creates", type=int, default=3000)
    parser.add_argument("--create-rounds", type=int, default=7)
    parser.add_argument("--bulk-rounds", type=int, default=7)
    args = parser.parse_args()
    s, r = args.seconds, args.repeat
    setup_django()
    from django.conf import settings

    client = redis_client()
    prefix = settings.SNOWID_REDIS_KEY_PREFIX
    try:
        raw = RawEvalsha(
            client.connection_pool.connection_kwargs.get("host", "127.0.0.1"),
            client.connection_pool.connection_kwargs.get("port", 6379),
        )
        seed = SeedScheme(client, prefix)
        issuer = wide_issuer("bench-single")

        def median(fn: Callable[[], float]) -> float:
            return statistics.median(fn() for _ in range(r))

        floor = median(lambda: rate(raw, s))
        seed1 = median(lambda: rate(seed, s))
        ours1 = median(lambda: rate(lambda: issuer.next_number(12), s))
        seed4 = median(lambda: multi("seed", s))
        ours4 = median(lambda: multi("ours", s))
        shards = [i & 15 for i in range(1000)]
        batch_streams = itertools.count()

        def batch_rate() -> float:
            # The code's speed, not the stream's waits: each repeat draws on a stream of its
            # own, 200,000 numbers, below what one second of this format holds (2**19 - 1),
            # after a first block that recovers the new stream (which then waits for its
            # second, up to 1 s).
            batch_issuer = wide_issuer(f"bench-batch-{next(batch_streams)}")
            batch_issuer.next_numbers(shards)
            start = time.perf_counter()
            for _ in range(200):
                batch_issuer.next_numbers(shards)
            return 200_000 / (time.perf_counter() - start)

        batch = median(batch_rate)
        try:
            rounds = database_part(
                args.creates,
                r,
                raw,
                create_rounds=args.create_rounds,
                bulk_rounds=args.bulk_rounds,
            )
        except Exception as exc:  # PostgreSQL missing: say so, measure the rest
            print(f"(database part not measured: {exc!r})", file=sys.stderr)
            rounds = {}
        db = {k: statistics.median(v) for k, v in rounds.items()}
    finally:
        keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
        if keys:
            client.delete(*keys)

    rows = [
        ("raw EVALSHA round trip, bare socket (floor)", floor, None),
        ("seeds' scheme, 1 client", seed1, seed1),
        ("django-snowid next_number(), 1 process", ours1, seed1),
        ("seeds' scheme, 4 processes (aggregate)", seed4, seed4),
        ("django-snowid next_number(), 4 processes", ours4, seed4),
        ("django-snowid batch mode, blocks of 1000", batch, seed1),
    ]
    print(f"\n{'what':<48} {'numbers/s':>12} {'x seeds':>9}")
    print("-" * 71)
    for label, value, base in rows:
        ratio = f"{value / base:>8.2f}x" if base else f"{'':>9}"
        print(f"{label:<48} {value:>12,.0f} {ratio}")
    print(f"(one round trip costs {1e6 / floor:.0f} µs on this machine)")
    verdicts = [
        ("1 process >= 1.0x seeds' scheme", ours1 >= seed1, f"{ours1 / seed1:.2f}x"),
        ("4 processes >= 1.0x seeds' scheme", ours4 >= seed4, f"{ours4 / max(seed4, 1):.2f}x"),
        ("batch mode >= 1,000,000/s per process", batch >= 1_000_000, f"{batch:,.0f}/s"),
    ]
    if db:
        plain_rate = args.creates / db["plain"]
        title = "PostgreSQL create(), time x without the field"
        print(f"\n{title:<48} {'per second':>12} {'time':>9}  {'range':>11}")
        print("-" * 84)
        for label, key in [
            ("create(), no order number", None),
            ("create() after a bare-socket EVALSHA (floor)", "floor_x"),
            ("create(), a UNIQUE bigint column set in Python", "unique_x"),
            ("create(), OrderNumberField (Redis)", "numbered_x"),
        ]:
            x, spread = (db[key], spread_of(rounds[key])) if key else (1.0, "")
            print(f"{label:<48} {plain_rate / x:>12,.0f} {x:>8.2f}x  {spread:>11}")
        print(
            f"(the order number against the same row with its UNIQUE column set in Python: "
            f"{db['create_over_unique']:.3f}x, {spread_of(rounds['create_over_unique'], 3)}; "
            f"median and range of {len(rounds['numbered_x'])} rounds)"
        )
        title = f"PostgreSQL bulk_create() of {BULK}, time x without"
        print(f"\n{title:<48} {'rows/s':>12} {'time':>9}  {'range':>11}")
        print("-" * 84)
        bulk_rate = db["bulk_rows"]
        for label, key in [
            ("bulk_create(), no order number", None),
            ("bulk_create(), UNIQUE bigint set in Python", "bulk_unique_x"),
            ("bulk_create(), OrderNumberQuerySet (Redis)", "bulk_x"),
        ]:
            x, spread = (db[key], spread_of(rounds[key])) if key else (1.0, "")
            print(f"{label:<48} {bulk_rate / x:>12,.0f} {x:>8.2f}x  {spread:>11}")
        print(
            f"(the order numbers against the UNIQUE column set in Python: "
            f"{db['bulk_over_unique']:.3f}x, {spread_of(rounds['bulk_over_unique'], 3)}; "
            f"median and range of {len(rounds['bulk_x'])} rounds)"
        )
        waits = rounds.get("waits", [])
        print(
            f"(waits of the numbered inserts for the next second: {len(waits)}, "
            f"{sum(waits):.3f} s in all; the bulks' format holds 524,287 numbers a second)"
        )
        print(f"\n{'PostgreSQL database store':<48} {'numbers/s':>12} {'x theirs':>9}")
        print("-" * 71)
        print(f"{'django-sequences get_next_value()':<48} {db['sequences']:>12,.0f} {1:>8.2f}x")
        print(
            f"{'django-snowid database store, next_number()':<48} {db['db_store']:>12,.0f} "
            f"{db['db_store'] / db['sequences']:>8.2f}x"
        )
        verdicts.append(
            (
                f"bulk_create() of {BULK} time <= 1.35x without the field",
                db["bulk_x"] <= 1.35,
                f"{db['bulk_x']:.3f}x ({spread_of(rounds['bulk_x'], 3)})",
            )
        )
        verdicts.append(
            (
                f"bulk_create() of {BULK} <= 1.05x the UNIQUE column set",
                db["bulk_over_unique"] <= 1.05,
                f"{db['bulk_over_unique']:.3f}x ({spread_of(rounds['bulk_over_unique'], 3)})",
            )
        )
        verdicts.append(
            (
                "create() <= 1.05x the UNIQUE column set (blocks)",
                db["create_over_unique"] <= 1.05,
                f"{db['create_over_unique']:.3f}x ({spread_of(rounds['create_over_unique'], 3)})",
            )
        )
        verdicts.append(
            (
                "create() time <= 1.05x without the field (blocks)",
                db["numbered_x"] <= 1.05,
                f"{db['numbered_x']:.3f}x ({spread_of(rounds['numbered_x'], 3)})",
            )
        )
        verdicts.append(
            (
                "database store (blocks) >= 1.0x get_next_value()",
                db["db_store"] >= db["sequences"],
                f"{db['db_store'] / db['sequences']:.2f}x",
            )
        )
    print()
    for label, ok, figure in verdicts:
        print(f"[{'PASS' if ok else 'MISS'}] {label:<52} {figure}")
    print(
        json.dumps(
            {
                "floor": floor,
                "seed1": seed1,
                "ours1": ours1,
                "seed4": seed4,
                "ours4": ours4,
                "batch": batch,
                **db,
            }
        ),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
