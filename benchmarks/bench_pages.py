"""Deep pages on PostgreSQL: ours (by Snowflake id) against DRF's LimitOffsetPagination,
PageNumberPagination and CursorPagination, at page 1 and deep in a large table, in the
same run; then what the settled id costs a page with many connections open.

    python benchmarks/bench_pages.py [--rows 10000000] [--depth 9000000] [--repeat 7]
                                     [--connections 100] [--db-name snowid_bench_pages]

Runs on a PostgreSQL server of its own (``--connections`` need a ``max_connections``
above the shared server's 100; ``--dsn`` names another), in a scratch database dropped
at the end; loads ``--rows`` rows with ids computed
the layout's way (``INSERT ... SELECT generate_series``: 64 ids a millisecond of one
worker, ending an hour ago), and times each paginator's ``paginate_queryset()`` for
page 1 and for the page ``--depth`` rows down (20 rows a page), newest first, each
figure the median of ``--repeat`` rounds whose order rotates. Target: our deep page
within 1.1x of our page 1. Then, with ``--connections`` connections open (half of them
idle in a transaction), the settled-id query alone, averaged over 1,000 calls: at most
1 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAGE = 20
PER_MS = 64
TARGET = 1.1


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--depth", type=int, default=9_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--db-name", default="snowid_bench_pages")
    parser.add_argument("--dsn", default=None, help="a server to use instead of one of its own")
    return parser.parse_args()


def configure(dsn: str, name: str) -> None:
    import django
    from django.conf import settings

    settings.configure(
        INSTALLED_APPS=["django_snowid", "benchmarks.benchapp", "rest_framework"],
        DATABASES={
            "default": {
                "ENGINE": "django.db.backends.postgresql",
                **dict(
                    (key.upper(), value) for key, value in (part.split("=") for part in dsn.split())
                ),
                "NAME": name,
            }
        },
        USE_TZ=True,
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        SNOWID_WORKER_ID_SOURCE="static",
        SNOWID_WORKER_ID=1,
        ALLOWED_HOSTS=["*"],
        REST_FRAMEWORK={"PAGE_SIZE": PAGE},
    )
    django.setup()


def load(rows: int) -> None:
    """``rows`` rows, ``PER_MS`` ids a millisecond of worker 1, the newest an hour ago."""
    from django.core.management import call_command
    from django.db import connection

    from django_snowid.settings_layouts import get_layout

    call_command("migrate", run_syncdb=True, verbosity=0)
    layout = get_layout()
    end = datetime.now(timezone.utc) - timedelta(hours=1)
    first_tick = layout.tick_at(end) - rows // PER_MS - 1
    node = layout.node_value(1) << layout.node_shift
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO benchapp_snowrow (id, name, value) "
            f"SELECT ((%s + g / {PER_MS}) << {layout.time_shift}) | %s | (g %% {PER_MS}), "
            "'row', g FROM generate_series(0, %s - 1) g",
            [first_tick, node, rows],
        )
        cursor.execute("VACUUM ANALYZE benchapp_snowrow")


def paginators(depth: int) -> dict[str, tuple[Any, dict[str, str], dict[str, str]]]:
    """Each paginator, and the query strings of its page 1 and of its page ``depth`` rows down."""
    from rest_framework import pagination

    from benchmarks.benchapp.models import SnowRow
    from django_snowid.drf import SnowflakeCursorPagination

    deep_id = SnowRow.objects.order_by("-id").values_list("id", flat=True)[depth]
    drf_cursor = pagination.CursorPagination()
    drf_cursor.ordering = "-id"
    drf_cursor.base_url = "/rows/"
    position = pagination.Cursor(offset=0, reverse=False, position=str(deep_id))
    deep_cursor = parse_qs(urlsplit(drf_cursor.encode_cursor(position)).query)["cursor"][0]
    return {
        "ours (max_id)": (SnowflakeCursorPagination(), {}, {"max_id": str(deep_id)}),
        "DRF CursorPagination": (drf_cursor, {}, {"cursor": deep_cursor}),
        "DRF LimitOffsetPagination": (
            pagination.LimitOffsetPagination(),
            {"limit": str(PAGE)},
            {"limit": str(PAGE), "offset": str(depth)},
        ),
        "DRF PageNumberPagination": (
            pagination.PageNumberPagination(),
            {},
            {"page": str(depth // PAGE + 1)},
        ),
    }


def page_call(paginator: Any, query: dict[str, str]) -> Callable[[], list[Any]]:
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from benchmarks.benchapp.models import SnowRow

    request = Request(APIRequestFactory().get("/rows/", query))
    queryset = SnowRow.objects.order_by("-id")
    return lambda: paginator.paginate_queryset(queryset, request)


def time_pages(depth: int, repeat: int) -> dict[tuple[str, str], float]:
    """Each page's median time over ``repeat`` rounds; a page under 50 ms is called 20
    times a round (its time a call is their mean), so that a shared machine's noise
    weighs less on the fast ones."""
    calls = {}
    for name, (paginator, first, deep) in paginators(depth).items():
        calls[(name, "page 1")] = page_call(paginator, first)
        calls[(name, f"{depth:,} down")] = page_call(paginator, deep)
    inner = {}
    for label, call in calls.items():
        began = time.perf_counter()
        assert len(call()) == PAGE  # a full page each, and warm caches
        inner[label] = 20 if time.perf_counter() - began < 0.05 else 1
    spent: dict[tuple[str, str], list[float]] = {label: [] for label in calls}
    labels = list(calls)
    for round_ in range(repeat):
        for turn in range(len(labels)):
            label = labels[(round_ + turn) % len(labels)]
            spent[label].append(_per_call(calls[label], inner[label], warm=False))
    return {label: statistics.median(times) for label, times in spent.items()}


def _per_call(call: Callable[[], object], calls: int, *, warm: bool = True) -> float:
    if warm:
        call()
    began = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - began) / calls


def time_settled(dsn: str, name: str, connections: int, calls: int = 1000) -> dict[str, float]:
    """With ``connections`` others open (half in a transaction): the mean time of a
    settled() call, of a ``SELECT 1`` on the same connection (the round trip), and the
    server's own time for the query (a loop of it inside one statement)."""
    import psycopg
    from django.db import connection

    from django_snowid.pagination import settled
    from django_snowid.pagination.settle import _OLDEST_TRANSACTION
    from django_snowid.settings_layouts import get_layout

    others = [psycopg.connect(f"{dsn} dbname={name}") for _ in range(connections)]
    try:
        for number, other in enumerate(others):
            other.execute("SELECT 1")  # psycopg began a transaction
            if number % 2:
                other.commit()  # idle, out of a transaction
        layout = get_layout()
        cursor = connection.cursor()
        loop = (
            "DO $$ DECLARE r record; BEGIN FOR i IN 1..%d LOOP PERFORM pg_stat_clear_snapshot(); "
            "FOR r IN %s LOOP END LOOP; END LOOP; END $$"
        )
        return {
            "settled()": _per_call(lambda: settled(layout, using="default"), calls),
            "SELECT 1": _per_call(lambda: cursor.execute("SELECT 1"), calls),
            "server": _per_call(lambda: cursor.execute(loop % (calls, _OLDEST_TRANSACTION)), 1)
            / calls,
        }
    finally:
        for other in others:
            other.close()


def report(
    args: argparse.Namespace, pages: dict[tuple[str, str], float], each: dict[str, float]
) -> int:
    deep = f"{args.depth:,} down"
    print(f"PostgreSQL, {args.rows:,} rows, {PAGE} rows a page, median of {args.repeat} rounds")
    print(f"{'paginator':28} {'page 1 ms':>10} {deep + ' ms':>18} {'deep/page 1':>12}")
    for name in dict.fromkeys(label for label, _ in pages):
        first, far = pages[(name, "page 1")], pages[(name, deep)]
        print(f"{name:28} {first * 1e3:>10.3f} {far * 1e3:>18.3f} {far / first:>11.2f}x")
    ours = pages[("ours (max_id)", deep)] / pages[("ours (max_id)", "page 1")]
    print(f"ours: deep page / page 1 = {ours:.2f}x (target {TARGET}x)")
    print(
        f"settled-id query, {args.connections} other connections open: "
        f"{each['settled()'] * 1e3:.3f} ms a page (target 1 ms); SELECT 1 on the same "
        f"connection {each['SELECT 1'] * 1e3:.3f} ms; the server's time "
        f"{each['server'] * 1e3:.3f} ms"
    )
    return 0


def run(args: argparse.Namespace, dsn: str) -> int:
    import psycopg

    with psycopg.connect(f"{dsn} dbname=postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {args.db_name}")
        admin.execute(f"CREATE DATABASE {args.db_name}")
    try:
        configure(dsn, args.db_name)
        load(args.rows)
        pages = time_pages(args.depth, args.repeat)
        each = time_settled(dsn, args.db_name, args.connections)
        from django.db import connections

        connections.close_all()
        return report(args, pages, each)
    finally:
        with psycopg.connect(f"{dsn} dbname=postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {args.db_name} WITH (FORCE)")


def main() -> int:
    args = parse()
    if args.dsn:
        return run(args, args.dsn)
    from benchmarks.servers import OwnPostgres

    with OwnPostgres(max_connections=args.connections + 20) as server:
        return run(args, server.dsn)


if __name__ == "__main__":
    sys.exit(main())
