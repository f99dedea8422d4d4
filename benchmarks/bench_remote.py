"""Redis and PostgreSQL one network hop away: about 1 ms of round trip, made here.

    python benchmarks/bench_remote.py [--delay-ms 0.5] [--calls 400] [--repeat 3]

Needs root (``ip netns``, ``tc``: Debian package iproute2), ``socat``, ``redis-server``,
and PostgreSQL on 127.0.0.1:5432. It creates a network namespace joined to this one by a
veth pair, with ``netem`` delaying each direction by ``--delay-ms`` (0.5 ms each way: about
1 ms of round trip), addressed with a private /30 that exists only on that pair. On the
host side of the pair, two ``socat`` relays lead to a redis-server of this run's own and to
PostgreSQL, so both services sit behind the same hop and the same relay. The measuring
process runs inside the namespace. The same measurement also runs on loopback (same
relays, no namespace, no delay) first. Everything it made (namespace, veth pair,
processes) is removed at the end, also after an error.

Each line compares, interleaved in one run: named sequences (``next_value``) on the Redis
store and on the database store, against a bare Redis ``PING`` and a bare PostgreSQL
``SELECT 1`` on the same path; and ``create()`` of a row with an ``OrderNumberField`` (Redis
and database order stores, a stream each) against ``create()`` of the same row without it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.servers import OwnRedis, free_port, wait_port

NAMESPACE = f"snowid-bench-{os.getpid()}"
HOST_IF, NS_IF = f"snb{os.getpid() % 100000}h", f"snb{os.getpid() % 100000}n"
# A /30 of its own: 10.213.x.1 (host side) and 10.213.x.2 (namespace side).
SUBNET = f"10.213.{os.getpid() % 250}"
HOST_IP, NS_IP = f"{SUBNET}.1", f"{SUBNET}.2"


def run(*command: str) -> None:
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


# ------------------------------------------------------------------ the measuring side
def measure(host: str, redis_port: int, pg_port: int, calls: int, repeat: int) -> dict:
    """Runs in a process of its own (inside the namespace for the remote figures)."""
    import statistics

    os.environ["SNOWID_BENCH_DB"] = "postgresql"
    os.environ["SNOWID_BENCH_PG_HOST"] = host
    os.environ["SNOWID_BENCH_PG_PORT"] = str(pg_port)
    os.environ["SNOWID_BENCH_REDIS_URL"] = f"redis://{host}:{redis_port}/0"
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import override_settings
    from django_redis import get_redis_connection

    from benchmarks.benchapp.models import DatabaseNumberedOrder, NumberedOrder, PlainOrder
    from benchmarks.timing import interleaved_rates
    from django_snowid.db.connections import close_own_connections
    from django_snowid.orders import issuer as order_issuers
    from django_snowid.sequences import next_value

    connection.settings_dict["NAME"] = f"snowid_bench_remote_{os.getpid()}"
    old = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    call_command("migrate", verbosity=0)
    client = get_redis_connection("snowid")
    figures: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    def select_one(i: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

    try:
        with override_settings(SNOWID_SEQUENCE_BACKEND="redis"):
            next_value("remote")  # the first raise
        with override_settings(SNOWID_SEQUENCE_BACKEND="database"):
            next_value("remote-db")
        redis_seq = override_settings(SNOWID_SEQUENCE_BACKEND="redis")
        db_seq = override_settings(SNOWID_SEQUENCE_BACKEND="database")
        for _ in range(repeat):
            ping, select, ours_redis, ours_db = interleaved_rates(
                [
                    lambda i: client.ping(),
                    select_one,
                    lambda i: next_value("remote"),
                    lambda i: next_value("remote-db"),
                ],
                calls,
                chunk=50,
                contexts=[None, None, lambda: redis_seq, lambda: db_seq],
            )
            add("redis PING", ping)
            add("postgresql SELECT 1", select)
            add("next_value, Redis store", ours_redis)
            add("next_value, database store", ours_db)

        # One store per stream, each stream's issuer made once: switching one stream's
        # store between chunks would recover it at every switch.
        for model, backend in ((NumberedOrder, "redis"), (DatabaseNumberedOrder, "database")):
            field = model._meta.get_field("number")
            with override_settings(SNOWID_ORDER_BACKEND=backend):
                issuer = order_issuers.StreamIssuer(field.stream, field.format)
                issuer.recover()
            order_issuers._issuers[(field.stream, field.format)] = issuer
        NumberedOrder.objects.create(user_id=0)  # script loading
        DatabaseNumberedOrder.objects.create(user_id=0)
        for _ in range(repeat):
            plain, numbered_redis, numbered_db = interleaved_rates(
                [
                    lambda i: PlainOrder.objects.create(user_id=i),
                    lambda i: NumberedOrder.objects.create(user_id=i),
                    lambda i: DatabaseNumberedOrder.objects.create(user_id=i),
                ],
                max(calls // 2, 50),
                chunk=25,
            )
            add("create(), no order number", plain)
            add("create(), order number from Redis", numbered_redis)
            add("create(), order number from the database", numbered_db)
    finally:
        client.flushdb()  # this run's own server
        close_own_connections()
        connection.creation.destroy_test_db(old, verbosity=0)
    return {name: statistics.median(values) for name, values in figures.items()}


# ------------------------------------------------------------------ a delaying relay
def relay_main(spec: str) -> None:
    """``listen_host:port:target_port:delay_ms``: forward to 127.0.0.1:target_port, each
    chunk held ``delay_ms`` in each direction (for kernels without ``netem``)."""
    import threading

    host, port, target, delay_ms = spec.split(":")
    delay = float(delay_ms) / 1000
    server = socket.create_server((host, int(port)))

    def pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                due = time.perf_counter() + delay
                while (left := due - time.perf_counter()) > 0:
                    time.sleep(left if left > 0.0002 else 0)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    while True:
        client, _ = server.accept()
        upstream = socket.create_connection(("127.0.0.1", int(target)))
        for sock in (client, upstream):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()


# ------------------------------------------------------------------ the setting-up side
class Setup:
    """The namespace, the veth pair with netem, a redis-server and the relays."""

    def __init__(self, delay_ms: float) -> None:
        self.delay_ms = delay_ms
        self.processes: list[subprocess.Popen[bytes]] = []
        self.namespace = False
        self.netem = False  # the kernel delays the pair; else the relays delay
        self.redis = OwnRedis()
        self.redis_port = 0

    def start_redis(self) -> None:
        self.redis.__enter__()
        self.redis_port = self.redis.port

    def spawn(self, *command: str) -> None:
        self.processes.append(
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )

    def relay(self, listen_host: str, target_port: int, delay_ms: float = 0) -> int:
        """A relay on ``listen_host`` to ``127.0.0.1:target_port``; its port. socat, or,
        with a delay, one of ours that holds each chunk ``delay_ms`` each way."""
        port = free_port(listen_host)
        if delay_ms:
            spec = f"{listen_host}:{port}:{target_port}:{delay_ms}"
            self.spawn(sys.executable, __file__, "--relay", spec)
        else:
            self.spawn(
                "socat",
                f"TCP-LISTEN:{port},bind={listen_host},fork,reuseaddr,nodelay",
                f"TCP:127.0.0.1:{target_port},nodelay",
            )
        wait_port(listen_host, port)
        return port

    def make_namespace(self) -> None:
        run("ip", "netns", "add", NAMESPACE)
        self.namespace = True
        run("ip", "link", "add", HOST_IF, "type", "veth", "peer", "name", NS_IF)
        run("ip", "link", "set", NS_IF, "netns", NAMESPACE)
        run("ip", "addr", "add", f"{HOST_IP}/30", "dev", HOST_IF)
        run("ip", "link", "set", HOST_IF, "up")
        ns = ("ip", "netns", "exec", NAMESPACE)
        run(*ns, "ip", "addr", "add", f"{NS_IP}/30", "dev", NS_IF)
        run(*ns, "ip", "link", "set", NS_IF, "up")
        run(*ns, "ip", "link", "set", "lo", "up")
        delay = f"{self.delay_ms}ms"
        try:
            run("tc", "qdisc", "add", "dev", HOST_IF, "root", "netem", "delay", delay)
            run(*ns, "tc", "qdisc", "add", "dev", NS_IF, "root", "netem", "delay", delay)
            self.netem = True
        except subprocess.CalledProcessError as exc:
            # A kernel without sch_netem ("Specified qdisc kind is unknown"): the relays
            # on the pair hold each chunk instead.
            print(
                f"bench_remote: no netem here ({exc.stderr.decode().strip()}); "
                f"the relays delay each direction by {self.delay_ms} ms instead."
            )

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGTERM)
                process.wait(timeout=10)
        if self.namespace:
            # Deleting the namespace deletes its end of the pair, and with it the pair.
            subprocess.run(["ip", "netns", "del", NAMESPACE], check=False)
            subprocess.run(["ip", "link", "del", HOST_IF], check=False, stderr=subprocess.DEVNULL)
        self.redis.__exit__()


def inner(host: str, redis_port: int, pg_port: int, args: argparse.Namespace, netns: bool):
    command = [
        sys.executable,
        __file__,
        "--inner",
        f"{host}:{redis_port}:{pg_port}",
        "--calls",
        str(args.calls),
        "--repeat",
        str(args.repeat),
    ]
    if netns:
        command = ["ip", "netns", "exec", NAMESPACE, *command]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay-ms", type=float, default=0.5, help="netem delay each way")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--inner", help=argparse.SUPPRESS)
    parser.add_argument("--relay", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.relay:
        relay_main(args.relay)
        return 0
    if args.inner:
        host, redis_port, pg_port = args.inner.split(":")
        figures = measure(host, int(redis_port), int(pg_port), args.calls, args.repeat)
        print(json.dumps(figures))
        return 0

    missing = [tool for tool in ("ip", "tc", "socat", "redis-server") if not shutil.which(tool)]
    if missing:
        print(f"bench_remote: cannot run, missing {', '.join(missing)}")
        return 1
    setup = Setup(args.delay_ms)
    try:
        setup.start_redis()
        local = inner(
            "127.0.0.1",
            setup.relay("127.0.0.1", setup.redis_port),
            setup.relay("127.0.0.1", 5432),
            args,
            netns=False,
        )
        try:
            setup.make_namespace()
        except subprocess.CalledProcessError as exc:
            print(
                "bench_remote: network namespaces cannot be made here "
                f"({exc.stderr.decode().strip()}); loopback figures only."
            )
            remote = None
        else:
            delay = 0 if setup.netem else args.delay_ms
            remote = inner(
                HOST_IP,
                setup.relay(HOST_IP, setup.redis_port, delay),
                setup.relay(HOST_IP, 5432, delay),
                args,
                netns=True,
            )
    finally:
        setup.stop()

    how = "netem on the veth pair" if setup.netem else "delaying relays on the veth pair"
    print(f"Redis and PostgreSQL one hop away, {args.repeat} runs (medians); remote: {how}")
    where = "loopback" if remote is None else "netns: rate, ms a call"
    print(f"{'':44} {'loopback':>14} {where:>26}")
    for name, value in local.items():
        per_s = f"{value:10,.0f}/s"
        far = "" if remote is None else f"{remote[name]:10,.0f}/s {1000 / remote[name]:7.2f} ms"
        print(f"{name:44} {per_s:>14} {far:>26}")
    if remote is not None:
        print(f"round trip over the hop (bare Redis PING): {1000 / remote['redis PING']:.2f} ms")
        ratio = remote["next_value, Redis store"] / remote["next_value, database store"]
        print(f"next_value Redis store / database store over the hop: {ratio:.2f}x")
        plain = remote["create(), no order number"]
        for name in (
            "create(), order number from Redis",
            "create(), order number from the database",
        ):
            print(f"{name}: {plain / remote[name]:.2f}x the time of create() without it")
        x = plain / remote["create(), order number from Redis"]
        verdict = "PASS" if x <= 1.10 else "MISS"
        print(
            f"[{verdict}] create() with an order number from Redis one hop away <= 1.10x: {x:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
