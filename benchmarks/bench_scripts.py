"""Our Lua script runner against redis-py's own ``Script``, per call, in one run.

    python benchmarks/bench_scripts.py [--calls 20000] [--repeat 5]

Starts a redis-server of its own on a free loopback port (stopped by pid at the end) and
times, interleaved in chunks so that the machine's drift hits them alike:

- ``RedisScript`` (``django_snowid.stores.redis_scripts``): EVALSHA on this thread's own
  connection, and the same with ``server_id=True`` (the ``run_id`` of the server passed as
  the last argument, read once per connection: what our stores run);
- redis-py's ``client.register_script(source)`` ``Script``: EVALSHA through the client's
  connection pool;
- the same redis-py ``Script`` whose Lua reads the ``run_id`` itself (``INFO server`` in
  the script): the way to know which server ran a call without our runner.

Each script is ``HINCRBY`` on one key, a stand-in for a store's script. Prints µs a call
(median of the repeats) and each figure over redis-py's plain ``Script``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.servers import OwnRedis
from benchmarks.timing import interleaved_rates

SOURCE = "return redis.call('HINCRBY', KEYS[1], 'n', ARGV[1])"
# The run_id read in Lua, as a server-identity probe would need to without our runner.
SOURCE_WITH_RUN_ID = (
    "local rid = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)') "
    "redis.call('HSET', KEYS[1], 'rid', rid) "
    "return redis.call('HINCRBY', KEYS[1], 'n', ARGV[1])"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()

    import redis

    from django_snowid.stores.redis_scripts import RedisScript

    with OwnRedis() as server:
        client = redis.Redis(host="127.0.0.1", port=server.port)
        key = "{bench}:count"
        ours = RedisScript(SOURCE, safe_to_retry=True)
        ours_with_id = RedisScript(SOURCE, safe_to_retry=True, server_id=True)
        theirs = client.register_script(SOURCE)
        theirs_with_id = client.register_script(SOURCE_WITH_RUN_ID)
        calls = {
            "RedisScript, own connection": lambda i: ours(client, (key,), (1,)),
            "RedisScript, server_id=True (our stores)": lambda i: ours_with_id(
                client, (key,), (1,)
            ),
            "redis-py Script, through the pool": lambda i: theirs(keys=[key], args=[1]),
            "redis-py Script, run_id read in Lua": lambda i: theirs_with_id(keys=[key], args=[1]),
        }
        for call in calls.values():  # load every script, open every connection
            call(0)
        runs = [
            interleaved_rates(list(calls.values()), options.calls) for _ in range(options.repeat)
        ]
    names = list(calls)
    baseline = names.index("redis-py Script, through the pool")
    print(f"Lua script runners, {options.calls:,} calls x {options.repeat} (medians)")
    print(f"{'runner':<46} {'µs a call':>10} {'x redis-py Script':>18} {'range':>14}")
    for index, name in enumerate(names):
        micros = statistics.median(1e6 / run[index] for run in runs)
        ratios = [run[baseline] / run[index] for run in runs]  # time over the baseline's
        print(
            f"{name:<46} {micros:>10.1f} {statistics.median(ratios):>18.3f} "
            f"{min(ratios):>6.3f}-{max(ratios):.3f}"
        )


if __name__ == "__main__":
    main()
