"""What one Redis primary sustains with our scripts (the capacity plan's Redis figures).

    python benchmarks/bench_redis_capacity.py [--seconds 1.5] [--clients 2] [--processes 8]
        [--paced-seconds 2]

Starts a redis-server of its own on a free loopback port (stopped by pid at the end), and
has ``--clients`` processes send pipelines of 500 ``EVALSHA`` of one script each for
``--seconds``: the server, single-threaded, is the bottleneck, so the sum is what one
primary (one core) sustains for that script. Measured in the same run, as the baseline:
pipelined ``PING``, the cheapest command there is. Figures are per server; a cluster
multiplies them by its primaries (each sequence, stream and lease pool lives on one).

Then order numbers as an application issues them, in blocks (``SNOWID_ORDER_BLOCK_MAX``):
``--processes`` processes call ``next_number()`` as fast as they can, 4 streams each (a
19-bit sequence, so that no stream's second fills up), for ``--seconds``; the total is
the numbers one primary serves (against one script call a number, the RESERVE row above).
And at 10, 1,000 and 10,000 numbers a second per process, paced (``--paced-seconds``, to
the end of a whole second): the numbers the blocks abandoned at the end of their seconds,
as a share of the numbers reserved.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.servers import OwnRedis

PIPELINE = 500


def _client(port: int) -> object:
    import redis

    return redis.Redis(host="127.0.0.1", port=port)


def _hammer(port: int, case: str, seconds: float, worker: int, out: object) -> None:
    client = _client(port)
    run_id = client.info("server")["run_id"]
    sha, make_args = CASES[case](client, run_id, worker)
    pipe = client.pipeline(transaction=False)
    done, i = 0, 0
    deadline = time.perf_counter() + seconds
    began = time.perf_counter()
    while time.perf_counter() < deadline:
        for _ in range(PIPELINE):
            i += 1
            if sha is None:
                pipe.execute_command("PING")
            else:
                keys, args = make_args(i)
                pipe.evalsha(sha, len(keys), *keys, *args)
        pipe.execute()
        done += PIPELINE
    out.put(done / (time.perf_counter() - began))  # type: ignore[attr-defined]


def _ping(client, run_id, worker):
    return None, None


def _sequence(client, run_id, worker):
    from django_snowid.sequences.stores.redis import DRAW

    key = f"{{bench:seq:{worker}}}"
    client.hset(key, mapping={"cur": 0, "max": 10**15, "rid": run_id})
    sha = client.script_load(DRAW.source)
    now = int(time.time())
    return sha, lambda i: ([key], [1, now, 300, run_id])


def _order(client, run_id, worker):
    from django_snowid.orders.stores.redis import RESERVE

    # 64 streams a client: the capacity of the server, not of one stream's second
    # (16,383 numbers a second per stream with the default packing).
    sha = client.script_load(RESERVE.source)
    keys = [f"{{bench:order:{worker}:{n}}}" for n in range(64)]
    for key in keys:  # a state this server wrote: the script reserves (no recovery)
        client.hset(key, mapping={"sec": 0, "seq": 0, "rid": run_id})
    # ARGV as the store sends them (RESERVE's comment): no clock (TIME), plain numbers.
    return sha, lambda i: ([keys[i % 64]], [0, 16383, 1, 1, 5, "", "", "", "", "", "", run_id])


def _lease_renew(client, run_id, worker):
    from django_snowid.workers.stores.redis import ACQUIRE, RENEW

    key = f"{{bench:lease:{worker}}}"
    token = f"t{worker}"
    # ARGV as the store sends them (the scripts' comments), the server's run_id last. Grace
    # 0: a new pool is usable at once.
    args = [1024, 30_000, token, "bench", 0, 0, "classic", 0, run_id]
    lease_id, _ = client.eval(ACQUIRE.source, 1, key, *args)
    sha = client.script_load(RENEW.source)
    return sha, lambda i: ([key], [lease_id, token, 30_000, i, "bench", "classic", 0, run_id])


def _lease_acquire(client, run_id, worker):
    from django_snowid.workers.stores.redis import ACQUIRE

    # A full pool of 1024 leases a client after the first 1024 calls: each later call
    # scans the whole pool and refuses (the most a single acquire costs).
    sha = client.script_load(ACQUIRE.source)
    key = f"{{bench:pool:{worker}}}"
    return sha, lambda i: ([key], [1024, 30_000, f"t{i}", "bench", 0, 0, "classic", i, run_id])


CASES = {
    "PING (baseline)": _ping,
    "sequence draw (DRAW)": _sequence,
    "order number (RESERVE_LUA)": _order,
    "lease renew (RENEW_LUA)": _lease_renew,
    "lease acquire, pool of 1024 (ACQUIRE_LUA)": _lease_acquire,
}


STREAMS = 4  # a process's streams in the block figures
PACED_S = 2.0  # how long each paced rate runs


def _block_issuers(port: int, worker: int) -> list[object]:
    """Issuers of this process's streams, on the redis-server at ``port``, recovered."""
    from django.test import override_settings

    from django_snowid.core.order_format import OrderNumberFormat
    from django_snowid.orders.issuer import StreamIssuer
    from django_snowid.orders.recovery import recover_stream

    caches = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "snowid": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
        },
    }
    override_settings(CACHES=caches).enable()  # this process's for good
    fmt = OrderNumberFormat(sequence_bits=19, shard_bits=4)
    issuers = []
    for n in range(STREAMS):
        stream = f"bench-blocks-{worker}-{n}"
        recover_stream(stream, fmt, [])
        issuer = StreamIssuer(stream, fmt)
        issuer.next_number(1)  # waits for the recovered second
        issuers.append(issuer)
    return issuers


def _issue_flat_out(port: int, worker: int, ready: object, seconds: float, out: object) -> None:
    issuers = _block_issuers(port, worker)
    calls = [issuer.next_number for issuer in issuers]  # type: ignore[attr-defined]
    ready.wait()  # type: ignore[attr-defined]  # every process recovered and warm
    count, end = 0, time.time() + seconds
    while time.time() < end:
        for call in calls:
            for _ in range(100):
                call(12)
        count += 100 * len(calls)
    out.put(count / seconds)  # type: ignore[attr-defined]


def _issue_paced(port: int, worker: int, rate: int, ready: object, out: object) -> None:
    issuers = _block_issuers(port, worker)
    issuer = issuers[0]
    blocks = issuer._blocks  # type: ignore[attr-defined]
    first_reserved, first_abandoned = blocks.reserved, blocks.abandoned
    ready.wait()  # type: ignore[attr-defined]
    # Run to the end of a whole second: the last block's second is over too, so what it
    # leaves is what a process would abandon, not numbers cut off by the benchmark's end.
    duration = math.ceil(time.time() + PACED_S) - time.time()
    issued, step = 0, 1 / rate
    began = time.perf_counter()
    while (now := time.perf_counter() - began) < duration:
        due = int(now * rate) + 1
        while issued < due:
            issuer.next_number(12)  # type: ignore[attr-defined]
            issued += 1
        time.sleep(max(0.0, min(step, issued / rate - (time.perf_counter() - began))))
    blocks.wanted(0)  # the last block ends: its unused numbers count as abandoned
    out.put(  # type: ignore[attr-defined]
        (issued, blocks.reserved - first_reserved, blocks.abandoned - first_abandoned, duration)
    )


def _blocks(server: OwnRedis, processes: int, seconds: float) -> tuple[float, dict]:
    context = multiprocessing.get_context("fork")

    def run(target: object, extra: tuple) -> list:
        out = context.Queue()
        ready = context.Barrier(processes)  # the children start together, once all are warm
        workers = [
            context.Process(target=target, args=(server.port, n, *extra(ready), out))  # type: ignore[arg-type]
            for n in range(processes)
        ]
        for worker in workers:
            worker.start()
        results = [out.get(timeout=120) for _ in workers]
        for worker in workers:
            worker.join()
        return results

    total = sum(run(_issue_flat_out, lambda ready: (ready, seconds)))
    paced = {}
    for rate in (10, 1_000, 10_000):
        rows = run(_issue_paced, lambda ready, rate=rate: (rate, ready))
        paced[rate] = tuple(sum(column) for column in zip(*rows, strict=True))
    return total, paced


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--paced-seconds", type=float, default=PACED_S)
    args = parser.parse_args()
    globals()["PACED_S"] = args.paced_seconds  # the forked children read it
    if not shutil.which("redis-server"):
        print("bench_redis_capacity: redis-server is not installed")
        return 1
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    with OwnRedis() as server:
        context = multiprocessing.get_context("fork")
        results: dict[str, float] = {}
        for case in CASES:
            out = context.Queue()
            workers = [
                context.Process(target=_hammer, args=(server.port, case, args.seconds, n, out))
                for n in range(args.clients)
            ]
            for worker in workers:
                worker.start()
            results[case] = sum(out.get(timeout=60) for _ in workers)
            for worker in workers:
                worker.join()

        blocks = _blocks(server, args.processes, args.seconds)

    baseline = results["PING (baseline)"]
    print(
        f"one Redis primary, {args.clients} clients, pipelines of {PIPELINE}, "
        f"{args.seconds} s a case"
    )
    for case, rate in results.items():
        print(f"{case:44} {rate:12,.0f} calls/s   {rate / baseline:5.2f}x PING")
    total, paced = blocks
    single = results["order number (RESERVE_LUA)"]
    print(
        f"\norder numbers in blocks, {args.processes} processes x {STREAMS} streams, "
        f"next_number() as fast as each can"
    )
    print(
        f"{'numbers issued, all processes':44} {total:12,.0f} numbers/s "
        f"{total / single:5.2f}x one script call a number"
    )
    print(
        f"\n{'paced, per process':20} {'issued':>9} {'reserved':>9} {'abandoned':>9} "
        f"{'of reserved':>12} {'abandoned/s':>12} {'of a 14-bit second':>19}"
    )
    for rate, (issued, reserved, abandoned, seconds) in paced.items():
        share = abandoned / reserved if reserved else 0.0
        per_s = abandoned / seconds  # one process's, on one stream
        print(
            f"{f'{rate:,}/s':20} {issued:>9,} {reserved:>9,} {abandoned:>9,} {share:>12.1%} "
            f"{per_s:>12,.0f} {per_s / 16_383:>19.2%}"
        )
    ok = total >= 1_000_000
    print(
        f"\n[{'PASS' if ok else 'MISS'}] one primary, blocks >= 1,000,000 numbers/s: {total:,.0f}/s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
