"""Polling for new rows while writers commit out of id order: rows missed and rows served
twice by ours (``min_id`` below the settled id), by DRF's CursorPagination and by a naive
``pk > last seen`` poll, in the same run.

    python benchmarks/bench_feed_load.py [--db postgresql] [--writers 8] [--seconds 60]
        [--longest-transaction 2] [--poll-every 0.1]

``--writers`` forked processes insert for ``--seconds``; each transaction draws its id on
save, then works 0 to ``--longest-transaction`` seconds (random) before it commits. A
client polls every ``--poll-every`` seconds with each method. PostgreSQL settles by its
running transactions (``SNOWID_FEED_SETTLE_MARGIN_MS``, default 1 s); SQLite and
MariaDB by a settle window longer than any draw-to-commit (``--window``; by default the
longest transaction plus 1 s, and on SQLite, whose writers queue for one lock, the whole
run). Runs in a scratch database of the test settings (``SNOWID_TEST_DB_NAME``, default
``snowid_feedbench``); exits 1 if ours missed or repeated a row.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=["postgresql", "sqlite", "mariadb"], default="postgresql")
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--longest-transaction", type=float, default=2.0)
    parser.add_argument("--poll-every", type=float, default=0.1)
    parser.add_argument("--window", type=float, default=None)
    return parser.parse_args()


def main() -> int:
    args = parse()
    os.environ["SNOWID_TEST_DB"] = args.db
    os.environ.setdefault("SNOWID_TEST_DB_NAME", "snowid_feedbench")
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    from benchmarks.feedload import Load, run_load
    from django_snowid.conf import conf
    from tests.feedapp.models import Post
    from tests.pagination.pollers import DrfCursor, Naive, Ours

    load = Load(args.writers, args.seconds, args.longest_transaction, args.poll_every)
    whole_run = args.seconds + args.longest_transaction + 1
    window = args.window or (whole_run if args.db == "sqlite" else args.longest_transaction + 1)
    settings.SNOWID_FEED_SETTLE_WINDOW_S = window
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        client = Client()
        start = Post.objects.create(body="start").pk
        ours, drf, naive = Ours(client, start), DrfCursor(client), Naive(start)
        polls = {"ours (min_id, settled)": ours.poll, "DRF CursorPagination": drf.poll}
        polls["naive pk > last seen"] = naive.poll
        outcome = run_load(Post, polls, load, drained=lambda newest: ours.settled > newest)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    settle = (
        f"margin {conf.FEED_SETTLE_MARGIN_MS:g} ms"
        if args.db == "postgresql"
        else f"window {window:g} s"
    )
    print(
        f"{args.db}: {args.writers} writers for {args.seconds:g} s, transactions 0-"
        f"{args.longest_transaction:g} s, a poll every {args.poll_every:g} s, {settle}"
    )
    print(f"{'client':26} {'committed':>9} {'missed':>7} {'twice':>6}")
    for name, result in outcome.items():
        print(f"{name:26} {result.committed:>9,} {result.missed:>7,} {result.twice:>6,}")
    longest = next(iter(outcome.values())).longest_s
    print(f"longest draw-to-commit {longest:.2f} s")
    ours_result = outcome["ours (min_id, settled)"]
    return 1 if ours_result.missed or ours_result.twice else 0


if __name__ == "__main__":
    sys.exit(main())
