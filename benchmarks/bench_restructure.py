"""Order numbers before and after the restructuring of the Django glue, in the same run.

    python benchmarks/bench_restructure.py [--rounds 6] [--creates 1000] [--bulks 40]
                                           [--db sqlite,postgresql,mariadb] [--before ef15948]

The tree before the restructuring (commit ``ef15948``: send-ahead, the patched
``Model._do_insert``, the thread-local handoff) is exported with ``git archive`` into a
temporary directory; the current ``django_snowid/`` is the working tree. The old tree runs
twice: as it was (send-ahead on, its default) and with ``SNOWID_ORDER_SEND_AHEAD = False``,
which tells the cost of the restructuring from the cost of removing send-ahead (which
overlapped the Redis round trip with Django's work before the INSERT). Each round runs one
child process per variant, the order rotating from round to round, so that the machine's
drift hits all alike. A child imports its tree's ``django_snowid`` (it prints
which file it imported), creates a test database, and times, on the benchmark's own
``NumberedOrder`` model with the Redis order store (a redis-server of this run's own):

- ``create()`` of one row with an order number, ``--creates`` times;
- ``bulk_create()`` of 100 such rows through ``OrderNumberQuerySet``, ``--bulks`` times;
- the Python function calls of one ``create()`` (cProfile), and one ``create()`` taken
  apart in a loop of ``--creates`` of its own: its SQL statements and Redis commands
  (a query wrapper, the Redis server's own count: figures the machine's load does not
  move), and the time of its database call, of its Redis replies and of the rest
  (Python).

Printed: per database and operation, the median time of each tree, and the ratio new/old
per round (median, and the spread over the rounds); last, the ``PING`` round trip to the
run's Redis, as the machine is and with one CPU kept busy (what send-ahead hid is
mostly the time idle CPUs take to wake). Needs a git checkout with that commit,
``redis-server``, PostgreSQL on 127.0.0.1:5432 and MariaDB on 127.0.0.1:3306 for their rows
(each skipped, with a line saying so, when it is not reachable).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BULK = 100  # rows a bulk_create()


# ------------------------------------------------------------------ one tree, one child
def child(tree: str, db: str, creates: int, bulks: int, send_ahead: bool) -> None:
    """Runs in a process of its own: ``tree``'s ``django_snowid`` first on the path."""
    sys.path[:0] = [tree, str(ROOT)]
    os.environ["SNOWID_BENCH_DB"] = db
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
    import cProfile
    import pstats

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    settings.SNOWID_ORDER_SEND_AHEAD = send_ahead  # read by the old tree only

    import django_snowid
    from benchmarks.benchapp.models import NumberedOrder

    if db == "sqlite":
        # In memory: a commit to a file costs an fsync whose time drifts by more than the
        # code under test costs; PostgreSQL and MariaDB give the figures with a real commit.
        connection.settings_dict["TEST"]["NAME"] = None
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        for i in range(50):  # recovery, script loading, connections, caches
            NumberedOrder.objects.create(user_id=i)
        began = time.perf_counter()
        for i in range(creates):
            NumberedOrder.objects.create(user_id=i)
        create_us = (time.perf_counter() - began) / creates * 1e6
        began = time.perf_counter()
        for _ in range(bulks):
            NumberedOrder.objects.bulk_create([NumberedOrder(user_id=u) for u in range(BULK)])
        bulk_us = (time.perf_counter() - began) / bulks * 1e6
        profile = cProfile.Profile()
        profile.enable()
        for i in range(100):
            NumberedOrder.objects.create(user_id=i)
        profile.disable()
        calls = pstats.Stats(profile).total_calls / 100  # type: ignore[attr-defined]
        apart = take_apart(connection, lambda i: NumberedOrder.objects.create(user_id=i), creates)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    print(
        json.dumps(
            {
                "imported": django_snowid.__file__,
                "create_us": create_us,
                "bulk_us": bulk_us,
                "calls_per_create": calls,
                **apart,
            }
        )
    )


def take_apart(connection, create, times: int) -> dict[str, float]:
    """One ``create()`` taken apart, in a loop of its own (the timers add to what they time).

    Counted, so that the machine's load does not move them: its SQL statements and its
    Redis commands. The Redis server is this run's own, used by this child alone; its count
    of processed commands holds those a Lua script runs too, and the INFO that reads it
    first (the 1 taken off). Timed, in microseconds: its database call (the query wrapper
    around it), its Redis reply reads, and the rest (the Python of Django and of the tree).
    """
    import redis
    from redis.connection import AbstractConnection

    server = redis.Redis.from_url(os.environ["SNOWID_BENCH_REDIS_URL"])
    spent = {"database": 0.0, "reply": 0.0}
    statements = 0

    def query(execute, sql, params, many, context):
        nonlocal statements
        statements += 1
        began = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent["database"] += time.perf_counter() - began

    read_response = AbstractConnection.read_response

    def reply(*args, **kwargs):
        began = time.perf_counter()
        try:
            return read_response(*args, **kwargs)
        finally:
            spent["reply"] += time.perf_counter() - began

    before = server.info("stats")["total_commands_processed"]
    AbstractConnection.read_response = reply
    try:
        with connection.execute_wrapper(query):
            began = time.perf_counter()
            for i in range(times):
                create(i)
            total = time.perf_counter() - began
    finally:
        AbstractConnection.read_response = read_response
    commands = server.info("stats")["total_commands_processed"] - before - 1
    return {
        "queries_per_create": statements / times,
        "redis_commands_per_create": commands / times,
        "database_us": spent["database"] / times * 1e6,
        "reply_us": spent["reply"] / times * 1e6,
        "rest_us": (total - spent["database"] - spent["reply"]) / times * 1e6,
    }


# ------------------------------------------------------------------------- the parent
def export_tree(commit: str, into: str) -> str:
    """``django_snowid/`` as it was at ``commit``, extracted under ``into``."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", commit, "django_snowid"],
            check=True,
            capture_output=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        raise SystemExit(
            f"bench_restructure: cannot export {commit} from a git checkout at {ROOT}: "
            f"{detail.decode().strip() or exc}"
        ) from None
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


#: The database servers' ports on this host, by SNOWID_BENCH_DB name (benchmarks/settings.py).
SERVER_PORTS = {"postgresql": 5432, "mariadb": 3306}


def reachable(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return True
    except OSError:
        return False


#: The variants a round runs: (tree, send-ahead), the old tree as it was and without it.
VARIANTS = {"old": ("old", True), "old, no send-ahead": ("old", False), "new": ("new", False)}


def run_child(
    tree: str, db: str, send_ahead: bool, args: argparse.Namespace, env: dict[str, str]
) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", tree, "--db", db,
         "--creates", str(args.creates), "--bulks", str(args.bulks),
         *(["--send-ahead"] if send_ahead else [])],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"bench_restructure: the {db} child of {tree} failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if not result["imported"].startswith(tree):
        raise SystemExit(f"bench_restructure: {tree} imported {result['imported']}")
    return result


def round_trip_us(port: int, pings: int = 3000) -> tuple[float, float]:
    """The ``PING`` round trip to this run's Redis: as the machine is, and while another
    process keeps one CPU busy. On an idle machine a round trip includes waking the CPUs of
    both ends, the part send-ahead overlapped with Django's work before the INSERT."""
    import redis

    from benchmarks.timing import interleaved_rates

    client = redis.Redis(host="127.0.0.1", port=port)
    (idle,) = interleaved_rates([lambda i: client.ping()], pings)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)  # the busy process is running before the first ping
        (loaded,) = interleaved_rates([lambda i: client.ping()], pings)
    finally:
        busy.kill()
        busy.wait()
    client.close()
    return 1e6 / idle, 1e6 / loaded


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--creates", type=int, default=1000)
    parser.add_argument("--bulks", type=int, default=40)
    parser.add_argument("--db", default="sqlite,postgresql,mariadb")
    parser.add_argument("--before", default="ef15948", help="the commit before the change")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--send-ahead", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.db, args.creates, args.bulks, args.send_ahead)
        return 0
    if not shutil.which("redis-server"):
        print("bench_restructure: redis-server is not installed")
        return 1
    sys.path.insert(0, str(ROOT))
    from benchmarks.servers import OwnRedis

    databases = args.db.split(",")
    for db, port in SERVER_PORTS.items():
        if db in databases and not reachable(port):
            print(f"bench_restructure: {db} at 127.0.0.1:{port} is not reachable: skipped")
            databases.remove(db)
    workdir = tempfile.mkdtemp(prefix="snowid-bench-before-")
    try:
        trees = {"old": export_tree(args.before, workdir), "new": str(ROOT)}
        with OwnRedis() as server:
            env = {**os.environ, "SNOWID_BENCH_REDIS_URL": f"redis://127.0.0.1:{server.port}/0"}
            env.pop("PYTHONPATH", None)
            report(databases, trees, args, env)
            idle, loaded = round_trip_us(server.port)
            print(
                f"  Redis PING round trip: {idle:.0f} µs, {loaded:.0f} µs while another "
                "process keeps one CPU busy"
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def report(databases: list[str], trees: dict[str, str], args: argparse.Namespace, env) -> None:
    load = os.getloadavg()[0]
    print(
        f"Order numbers (Redis store) before ({args.before}) and after the restructuring; "
        f"{args.rounds} rounds of rotating child processes; load average {load:.2f}; "
        "SQLite in memory"
    )
    names = list(VARIANTS)
    for db in databases:
        runs: dict[str, list[dict]] = {name: [] for name in names}
        for number in range(args.rounds):
            for name in names[number % 3 :] + names[: number % 3]:
                tree, send_ahead = VARIANTS[name]
                runs[name].append(run_child(trees[tree], db, send_ahead, args, env))
        for what, key in (("create()", "create_us"), (f"bulk_create({BULK})", "bulk_us")):
            times = {name: [r[key] for r in runs[name]] for name in names}
            medians = "   ".join(f"{n} {statistics.median(t):7,.0f} µs" for n, t in times.items())
            print(f"  {db:10} {what:17} {medians}")
            for base in names[:2]:
                ratios = [n / o for n, o in zip(times["new"], times[base], strict=True)]
                print(f"  {'':10} {'':17} new/({base}) {spread(ratios)}")
        for what, key, shown in (
            ("database call", "database_us", "{:7,.0f} µs"),
            ("Redis replies", "reply_us", "{:7,.0f} µs"),
            ("the rest", "rest_us", "{:7,.0f} µs"),
            ("Python calls", "calls_per_create", "{:,.4g}"),
            ("SQL statements", "queries_per_create", "{:,.4g}"),
            ("Redis commands", "redis_commands_per_create", "{:,.4g}"),  # and its scripts'
        ):
            each = {n: statistics.median(r[key] for r in runs[n]) for n in names}
            text = "   ".join(f"{n} {shown.format(v)}" for n, v in each.items())
            print(f"  {db:10} {what:17} {text} (one create())")


if __name__ == "__main__":
    raise SystemExit(main())
