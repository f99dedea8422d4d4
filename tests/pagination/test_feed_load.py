"""Exactly once under load: writers whose transactions commit out of id order, a client
polling with ``min_id`` every 100 ms. Short here (a few seconds a database); the full
scenario, with DRF's CursorPagination and the naive poll beside ours, is
``benchmarks/bench_feed_load.py``."""

from __future__ import annotations

import pytest
from django.db import connection

from benchmarks.feedload import Load, run_load
from tests.feedapp.models import Post
from tests.pagination.pollers import DrfCursor, Naive, Ours

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LOAD = Load(writers=4, seconds=3.0, longest_transaction_s=0.5, poll_every_s=0.1)


def settle_window() -> float:
    """Longer than any draw-to-commit here: SQLite's writers also wait for its one write
    lock (up to the whole run), MariaDB's only for their own work."""
    if connection.vendor == "sqlite":  # twice the run: a busy machine slows the queue
        return 2 * LOAD.seconds + LOAD.longest_transaction_s + 1
    return LOAD.longest_transaction_s + 1


def test_a_polling_client_gets_every_committed_row_once(client, settings):
    settings.SNOWID_FEED_SETTLE_MARGIN_MS = 200  # PostgreSQL: ids drawn on the INSERT
    settings.SNOWID_FEED_SETTLE_WINDOW_S = settle_window()
    start = Post.objects.create(body="start").pk
    ours, drf, naive = Ours(client, start), DrfCursor(client), Naive(start)
    outcome = run_load(
        Post,
        {"ours": ours.poll, "drf": drf.poll, "naive": naive.poll},
        LOAD,
        drained=lambda newest: ours.settled > newest,
    )
    assert outcome["ours"].committed > 10
    if connection.vendor != "postgresql":  # the premise of the window
        assert outcome["ours"].longest_s < settings.SNOWID_FEED_SETTLE_WINDOW_S, outcome
    assert (outcome["ours"].missed, outcome["ours"].twice) == (0, 0), outcome
