"""What one Redis primary sustains with our scripts (the capacity plan's Redis figures).

    python benchmarks/bench_redis_capacity.py [--seconds 1.5] [--clients 2]

Starts a redis-server of its own on a free loopback port (stopped by pid at the end), and
has ``--clients`` processes send pipelines of 500 ``EVALSHA`` of one script each for
``--seconds``: the server, single-threaded, is the bottleneck, so the sum is what one
primary (one core) sustains for that script. Measured in the same run, as the baseline:
pipelined ``PING``, the cheapest command there is. Figures are per server; a cluster
multiplies them by its primaries (each sequence, stream and lease pool lives on one).
"""

from __future__ import annotations

import argparse
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
    return sha, lambda i: ([keys[i % 64]], [0, 16383, 1, 1, 5, run_id])


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--clients", type=int, default=2)
    args = parser.parse_args()
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

    baseline = results["PING (baseline)"]
    print(
        f"one Redis primary, {args.clients} clients, pipelines of {PIPELINE}, "
        f"{args.seconds} s a case"
    )
    for case, rate in results.items():
        print(f"{case:44} {rate:12,.0f} calls/s   {rate / baseline:5.2f}x PING")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
