"""What metrics cost the hot paths: the same calls with SNOWID_METRICS on and off.

    python benchmarks/bench_metrics.py [--calls 20000] [--repeat 3] [--request-rounds 11]

Needs Redis (127.0.0.1:6379, or SNOWID_BENCH_REDIS_URL) and PostgreSQL (127.0.0.1:5432).
Compared in one run, in interleaved chunks (``benchmarks.timing.interleaved_rates``):

- ``next_id()``: its fast path counts nothing either way (a generator's count is read off
  its tick iterators at scrape time), so the two sides run the same code: their ratio
  shows the noise of the measurement;
- ``NumberedOrder.objects.create()`` (an OrderNumberField, the Redis store): "on" is an
  issuer made with SNOWID_METRICS = True, which counts each number and the second's fill;
- ``next_value(name)`` (the database store): "on" counts each value.

The database calls run in transactions that roll back after each chunk (no fsync a row:
its drift on a shared machine is larger than the cost measured); the Redis reservations
are real.

The collector is registered and scraped between rounds (untimed). Ratio = calls a second
with metrics on / off; the goal is within 2% (ratio >= 0.98). The cost of the counting
alone (no store) is printed too: on a busy machine the ratios drift by more than it.

Then prometheus_client's multiprocess mode (gunicorn), in a process of its own started
with ``PROMETHEUS_MULTIPROC_DIR`` set: a "request" issues an order number (``create()``),
a sequence value and an id, and "on" ends it as ``request_finished`` does, writing the
counts into the multiprocess files (``metrics.multiprocess.flush()``); "off" is the same
request with ``SNOWID_METRICS = False``; its ratio is the median of ``--request-rounds``
rounds (three round trips a request: noisier than the calls above). The cost of a flush is
printed too: alone (back to back, warm) and among the requests (its median time at the end
of the "on" requests).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
os.environ.setdefault("SNOWID_BENCH_DB", "postgresql")

from benchmarks.timing import interleaved_rates

TARGET = 0.98


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--request-rounds", type=int, default=11)
    parser.add_argument("--multiprocess", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.multiprocess:
        print(json.dumps(measure_multiprocess(args.calls, args.repeat)))
        return 0

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection, transaction
    from django_redis import get_redis_connection
    from prometheus_client import CollectorRegistry, generate_latest

    import django_snowid
    from benchmarks.benchapp.models import NumberedOrder
    from django_snowid.db.connections import close_own_connections
    from django_snowid.metrics.collector import SnowidCollector
    from django_snowid.orders import issuer as order_issuers
    from django_snowid.sequences import next_value

    registry = CollectorRegistry()
    registry.register(SnowidCollector())

    def scrape() -> None:
        generate_latest(registry)

    def metrics(on: bool):
        """The setting, changed without the settings signal (which would drop generators
        and leases between chunks): what is read when an issuer or a sequence is made."""
        settings.SNOWID_METRICS = on

    # A database of this run's own: other benchmarks may be using "test_snowid_bench".
    connection.settings_dict["NAME"] = f"snowid_bench_metrics_{os.getpid()}"
    old = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    prefix = os.environ["SNOWID_BENCH_PREFIX"]
    client = get_redis_connection("snowid")
    rows: dict[str, tuple[list[float], list[float]]] = {}
    try:
        # Order numbers: one issuer made with metrics on, one with them off, swapped in
        # for the field's stream before each chunk (untimed).
        field = NumberedOrder._meta.get_field("number")
        key = (field.stream, field.format)
        NumberedOrder.objects.create(user_id=1)  # recovers the stream, loads the scripts
        issuers = {}
        for on in (True, False):
            metrics(on)
            issuers[on] = order_issuers.StreamIssuer(field.stream, field.format)

        @contextmanager
        def orders(on: bool):
            order_issuers._issuers[key] = issuers[on]
            with rolled_back():
                yield

        # Sequences: two names, resolved once with metrics on and once off.
        metrics(True)
        next_value("bench-on")
        metrics(False)
        next_value("bench-off")

        @contextmanager
        def rolled_back():
            # A chunk in a transaction that rolls back: no fsync a row, whose drift on a
            # shared machine is far larger than what is measured here.
            with transaction.atomic():
                yield
                transaction.set_rollback(True)

        @contextmanager
        def sequences(on: bool):
            with rolled_back():
                yield

        django_snowid.next_id()  # the lease, the generator
        calls = {
            "next_id()": (
                [lambda i: django_snowid.next_id(), lambda i: django_snowid.next_id()],
                args.calls * 10,
                None,
                1000,  # a chunk of about a tick: both sides pay their share of tick entries
            ),
            "create() with an order number": (
                [
                    lambda i: NumberedOrder.objects.create(user_id=i),
                    lambda i: NumberedOrder.objects.create(user_id=i),
                ],
                max(args.calls // 4, 200),
                [lambda: orders(True), lambda: orders(False)],
                100,
            ),
            "next_value(name)": (
                [lambda i: next_value("bench-on"), lambda i: next_value("bench-off")],
                max(args.calls // 4, 200),
                [lambda: sequences(True), lambda: sequences(False)],
                100,
            ),
        }
        for name, (functions, n, contexts, chunk) in calls.items():
            on_rates, off_rates = [], []
            for _ in range(args.repeat):
                on, off = interleaved_rates(functions, n, chunk=chunk, contexts=contexts)
                scrape()  # between rounds, untimed: Prometheus scrapes every 15 s or so
                on_rates.append(on)
                off_rates.append(off)
            rows[name] = (on_rates, off_rates)
    finally:
        keys = list(client.scan_iter(match=f"{{{prefix}:*"))
        if keys:
            client.delete(*keys)
        django_snowid.ids.issuer.reset()
        close_own_connections()
        connection.creation.destroy_test_db(old, verbosity=0)

    # What "on" adds to a call, timed alone (no store, no noise of one): an upper bound
    # of the overhead that the ratios above cannot resolve on a busy machine.
    from django_snowid.sequences import issuer as sequence_issuer

    order = issuers[True]
    n = 200_000
    began = time.perf_counter()
    for _ in range(n):
        order._count(1, 1)
    order_ns = (time.perf_counter() - began) / n * 1e9
    tally = sequence_issuer.Tally(("bench", "database"))
    began = time.perf_counter()
    for _ in range(n):
        tally.issued += 1
    sequence_ns = (time.perf_counter() - began) / n * 1e9

    med = statistics.median
    print(f"metrics on against off, {args.repeat} runs (median; min-max of the ratios)")
    worst = 1.0
    for name, (on_rates, off_rates) in rows.items():
        ratios = [a / b for a, b in zip(on_rates, off_rates, strict=True)]
        worst = min(worst, med(ratios))
        print(
            f"{name:32} on {med(on_rates):12,.0f}/s  off {med(off_rates):12,.0f}/s  "
            f"ratio {med(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})  "
            f"target >= {TARGET}: {'ok' if med(ratios) >= TARGET else 'MISS'}"
        )
    for name, cost_ns in (
        ("create() with an order number", order_ns),
        ("next_value(name)", sequence_ns),
    ):
        call_ns = 1e9 / med(rows[name][1])
        print(
            f"{name:32} counting alone {cost_ns:6.0f} ns a call = "
            f"{100 * cost_ns / call_ns:.3f}% of the call"
        )
    print("next_id()                        counting alone      0 ns a call (read at scrape time)")

    with tempfile.TemporaryDirectory() as directory:
        command = [sys.executable, __file__, "--multiprocess", "--calls", str(args.calls)]
        command += ["--repeat", str(args.request_rounds)]
        env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": directory}
        out = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    on_rates, off_rates, flush_ns = figures["on"], figures["off"], figures["flush_ns"]
    ratios = [a / b for a, b in zip(on_rates, off_rates, strict=True)]
    print(
        "multiprocess mode (PROMETHEUS_MULTIPROC_DIR): a request = create() with an order "
        "number, next_value(), next_id()"
    )
    print(
        f"{'request, flushed at its end':32} on {med(on_rates):12,.0f}/s  "
        f"off {med(off_rates):12,.0f}/s  ratio {med(ratios):.3f} "
        f"({min(ratios):.3f}-{max(ratios):.3f})  "
        f"target >= {TARGET}: {'ok' if med(ratios) >= TARGET else 'MISS'}"
    )
    request_ns = 1e9 / med(off_rates)
    print(
        f"{'request, flushed at its end':32} flush alone {flush_ns / 1000:6.1f} µs a request = "
        f"{100 * flush_ns / request_ns:.3f}% of the request"
    )
    inside_ns = figures["inside_ns"]
    print(
        f"{'request, flushed at its end':32} among requests {inside_ns / 1000:6.1f} µs (median) = "
        f"{100 * inside_ns / request_ns:.3f}% of the request"
    )
    return 0


def measure_multiprocess(calls: int, repeat: int) -> dict[str, object]:
    """In a process started with PROMETHEUS_MULTIPROC_DIR set (before prometheus_client is
    imported): requests with the counts flushed at their end, against metrics off."""
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection, transaction
    from django_redis import get_redis_connection

    import django_snowid
    from benchmarks.benchapp.models import NumberedOrder
    from django_snowid.db.connections import close_own_connections
    from django_snowid.metrics import multiprocess
    from django_snowid.orders import issuer as order_issuers
    from django_snowid.sequences import issuer as sequence_issuer
    from django_snowid.sequences import next_value

    connection.settings_dict["NAME"] = f"snowid_bench_metrics_mp_{os.getpid()}"
    old = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    prefix = os.environ["SNOWID_BENCH_PREFIX"]
    client = get_redis_connection("snowid")
    try:
        field = NumberedOrder._meta.get_field("number")
        key = (field.stream, field.format)
        NumberedOrder.objects.create(user_id=1)  # recovers the stream, loads the scripts
        issuers = {}
        for on in (True, False):
            settings.SNOWID_METRICS = on  # read when an issuer or a sequence is made
            issuers[on] = order_issuers.StreamIssuer(field.stream, field.format)
            next_value(f"bench-mp-{on}")
        django_snowid.next_id()  # the lease, the generator
        multiprocess.install()
        multiprocess.flush()  # what was counted so far; starts the thread of the process

        @contextmanager
        def requests(on: bool):
            order_issuers._issuers[key] = issuers[on]
            with transaction.atomic():  # rolled back: no fsync a row (see the main run)
                yield
                transaction.set_rollback(True)

        def request(on: bool):
            name = f"bench-mp-{on}"

            def one(i: int) -> None:
                NumberedOrder.objects.create(user_id=i)
                next_value(name)
                django_snowid.next_id()
                if on:
                    began = time.perf_counter()
                    multiprocess.flush()  # what request_finished does
                    inside.append(time.perf_counter() - began)

            return one

        on_rates: list[float] = []
        off_rates: list[float] = []
        inside: list[float] = []  # each flush's time, among the requests
        for _ in range(repeat):
            on, off = interleaved_rates(
                [request(True), request(False)],
                max(calls // 4, 200),
                chunk=100,
                contexts=[lambda: requests(True), lambda: requests(False)],
            )
            on_rates.append(on)
            off_rates.append(off)
        # One flush alone, after a request's worth of counting (a value, a number, an id).
        tally = sequence_issuer.Tally(("bench", "database"))
        sequence_issuer._tallies[tally.labels] = tally
        order_issuers._issuers[key] = issuers[True]
        n = 20_000
        began = time.perf_counter()
        for _ in range(n):
            tally.issued += 1
            issuers[True]._count(1, 1)
            django_snowid.next_id()
            multiprocess.flush()
        flush_ns = (time.perf_counter() - began) / n * 1e9
    finally:
        keys = list(client.scan_iter(match=f"{{{prefix}:*"))
        if keys:
            client.delete(*keys)
        django_snowid.ids.issuer.reset()
        close_own_connections()
        connection.creation.destroy_test_db(old, verbosity=0)
    inside_ns = statistics.median(inside) * 1e9
    return {"on": on_rates, "off": off_rates, "flush_ns": flush_ns, "inside_ns": inside_ns}


if __name__ == "__main__":
    sys.exit(main())
