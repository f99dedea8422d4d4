"""Named sequences: the API on both stores, days, marks, Redis losses, bad input."""

from __future__ import annotations

import json
from datetime import datetime
from io import StringIO
from zoneinfo import ZoneInfo

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from django_snowid.core.sequence_plan import WINDOW_S, Rates
from django_snowid.db.connections import close_own_connections
from django_snowid.exceptions import (
    InvalidSequence,
    SequenceUnavailable,
    UnknownSequence,
)
from django_snowid.sequences import next_value, next_values
from django_snowid.sequences.spec import get_spec
from django_snowid.sequences.stores.database import (
    DatabaseSequenceStore,
    read_marks,
)
from django_snowid.sequences.stores.redis import DRAW, Outcome, RedisSequenceStore
from tests.support import Clock

pytestmark = pytest.mark.django_db(transaction=True)


def redis_store(settings, clock=None) -> RedisSequenceStore:
    store = RedisSequenceStore(settings.SNOWID_REDIS_ALIAS, settings.SNOWID_REDIS_KEY_PREFIX)
    if clock is not None:
        store.clock = clock
    return store


def test_values_go_up_by_one(seq_backend):
    assert [next_value("customer") for _ in range(3)] == [1, 2, 3]
    block = next_values("customer", 5)
    assert list(block) == [4, 5, 6, 7, 8]
    assert next_value("customer") == 9
    assert next_value("coupon") == 1


def test_declared_start(seq_backend, settings):
    settings.SNOWID_SEQUENCES = {"member": {"start": 1000}}
    assert next_value("member") == 1000
    assert list(next_values("member", 2)) == [1001, 1002]


def test_database_store_is_gapless_in_a_transaction(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    assert next_value("gapless") == 1
    with pytest.raises(RuntimeError), transaction.atomic():
        assert next_value("gapless") == 2
        raise RuntimeError("rolled back")
    assert next_value("gapless") == 2


def test_redis_mark_outlives_the_callers_rollback(settings):
    """The mark is committed on a connection of its own."""
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    if connection.vendor == "sqlite":
        pytest.skip("SQLite has one writer: a second connection waits for the first")
    with pytest.raises(RuntimeError), transaction.atomic():
        assert next_value("kept") == 1
        raise RuntimeError("rolled back")
    mark = read_marks()["kept"]
    assert mark >= 1
    # Redis lost: values continue above the committed mark, never from 1 again.
    redis_store(settings).client().delete(redis_store(settings).key("kept"))
    assert next_value("kept") == mark + 1


@pytest.mark.parametrize("store_kind", [pytest.param("redis", marks=pytest.mark.redis), "database"])
def test_daily_sequence_restarts_each_day_in_its_zone(settings, store_kind):
    settings.SNOWID_SEQUENCES = {"invoice": {"kind": "daily", "zone": "Asia/Tokyo", "start": 1}}
    tokyo = ZoneInfo("Asia/Tokyo")
    clock = Clock(datetime(2026, 11, 23, 23, 59, 59, tzinfo=tokyo))  # 14:59:59 UTC
    store = redis_store(settings, clock) if store_kind == "redis" else DatabaseSequenceStore(clock)
    spec = get_spec("invoice")
    assert list(store.next_values(spec, 3, None)) == [1, 2, 3]
    clock.now += 1  # midnight in Tokyo, 15:00 UTC the same UTC day
    assert store.next_values(spec, 1, None).start == 1
    assert store.next_values(spec, 1, None).start == 2
    marks = read_marks()
    assert marks["invoice:20261123"] >= 3 and marks["invoice:20261124"] >= 2
    # The old day continues where it stopped, if asked about (a late invoice of the day).
    assert store.next_values(spec, 1, None, now=clock.now - 1).start == 4


@pytest.mark.redis
def test_redis_restarted_empty_and_flushed_values_continue_above_the_mark(
    settings, throwaway_redis
):
    settings.CACHES = throwaway_redis.caches()
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    settings.SNOWID_SEQUENCES = {"c": {"min_step": 50, "max_step": 50}}
    seen = [next_value("c") for _ in range(30)]
    mark = read_marks()["c"]
    throwaway_redis.restart()  # empty: no AOF, no RDB
    seen += [next_value("c") for _ in range(80)]
    assert seen[30] == mark + 1
    mark = read_marks()["c"]
    throwaway_redis.client().flushall()
    seen += [next_value("c") for _ in range(10)]
    assert seen[110] == mark + 1
    assert seen == sorted(set(seen))
    assert max(seen) <= read_marks()["c"]


@pytest.mark.redis
def test_database_lost_values_continue_until_the_headroom_is_used(settings):
    """Nothing above the committed mark, ever: without the database, Redis stops there."""
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    settings.SNOWID_SEQUENCES = {"d": {"min_step": 100, "max_step": 100}}
    first = next_value("d")
    mark = read_marks()["d"]
    from django.db import connections

    alias = connection.alias
    saved = dict(connections.databases[alias])
    close_own_connections()  # the next raise opens a connection to the broken database
    broken = {**saved, "HOST": "127.0.0.1", "PORT": "1", "NAME": "/nonexistent/dir/x.sqlite3"}
    connections.databases[alias].update(broken)
    try:
        drawn = [next_value("d") for _ in range(mark - first)]
        with pytest.raises(SequenceUnavailable, match="could not be raised"):
            next_value("d")
    finally:
        connections.databases[alias].clear()
        connections.databases[alias].update(saved)
        close_own_connections()
    assert drawn == list(range(first + 1, mark + 1))
    assert next_value("d") == mark + 1


@pytest.mark.redis
def test_redis_unreachable_is_our_exception(settings, throwaway_redis):
    settings.CACHES = throwaway_redis.caches()
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    next_value("u")
    throwaway_redis.stop()
    with pytest.raises(SequenceUnavailable, match="Redis"):
        next_value("u")


@pytest.mark.redis
def test_step_grows_under_load_and_shrinks_when_idle(settings):
    settings.SNOWID_SEQUENCES = {"load": {"min_step": 10, "max_step": 10_000_000}}
    clock = Clock(datetime(2026, 11, 23, 12, 0, 0, tzinfo=ZoneInfo("UTC")))
    store = redis_store(settings, clock)
    spec = get_spec("load")
    store.next_values(spec, 1, None)
    assert store.state("load")["step"] == 10  # idle: the minimum
    steps = []
    for _second in range(5):
        for _ in range(20):
            store.next_values(spec, 100, None)  # 2,000 values a second
        steps.append(store.state("load")["step"])
        clock.now += 1
    assert steps[-1] > steps[0] and steps[-1] >= 1_000 * 1800
    rates = Rates(*(store.state("load")[f] for f in ("t", "n", "l", "w", "wn", "pw")))
    assert rates.estimate(int(clock.now)) >= 1_000
    clock.now += 11 * 60  # idle for eleven minutes: both windows are empty
    assert rates.estimate(int(clock.now)) == 0
    state = store.state("load")
    assert store.raise_mark(spec, "load", None, rates=rates, floor=state["max"])
    assert store.state("load")["step"] == 10


@pytest.mark.redis
def test_a_draw_raises_the_mark_ahead_once_its_headroom_runs_low(settings):
    """DRAW reads no rates back while the headroom lasts LOW_WATER_S at the highest rate it
    counts; past that, the rate of the last full second decides, and the mark is raised
    before the values under it run out."""
    settings.SNOWID_SEQUENCES = {"ahead": {"min_step": 10_000, "max_step": 10_000}}
    clock = Clock(datetime(2026, 11, 23, 12, 0, 0, tzinfo=ZoneInfo("UTC")))
    store = redis_store(settings, clock)
    spec = get_spec("ahead")
    store.next_values(spec, 1, None)
    mark = store.state("ahead")["max"]
    quiet = DRAW(store.client(), [store.key("ahead")], [1, int(clock.now), WINDOW_S])
    assert quiet.outcome is Outcome.DRAWN and quiet.rates is None  # 2 a second: 1,800 < mark
    store.next_values(spec, 20, None)  # 22 this second, none in the last full one
    assert store.state("ahead")["max"] == mark
    clock.now += 1
    store.next_values(spec, 1, None)  # 22 in the last full second: 19,800 > the headroom
    state = store.state("ahead")
    assert state["cur"] < mark < state["max"]


@pytest.mark.redis
def test_mark_raised_by_exactly_one_of_eight_racing_clients(settings):
    import threading

    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    settings.SNOWID_SEQUENCES = {"race": {"min_step": 1000, "max_step": 1000}}
    store = redis_store(settings)
    spec = get_spec("race")
    store.next_values(spec, 1, None)
    state = store.state("race")
    barrier = threading.Barrier(8)
    wins = []

    def client() -> None:
        barrier.wait()
        wins.append(store.raise_mark(spec, "race", None, rates=Rates(), floor=state["max"]))
        from django.db import connections

        connections.close_all()

    threads = [threading.Thread(target=client) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Each client is told the mark is raised, or that another holds the lock; the mark
    # itself went up once.
    assert len(wins) == 8 and True in wins
    assert read_marks()["race"] == state["max"] + 1000 == store.state("race")["max"]


def test_bad_input(seq_backend, settings):
    with pytest.raises(InvalidSequence, match="not a sequence name"):
        next_value("a{b}")
    with pytest.raises(InvalidSequence, match="not a sequence name"):
        next_value("")
    with pytest.raises(InvalidSequence, match="count is 0"):
        next_values("fine", 0)
    with pytest.raises(InvalidSequence, match="count is"):
        next_values("fine", True)
    settings.SNOWID_SEQUENCES_UNKNOWN = "refuse"
    settings.SNOWID_SEQUENCES = {"known": {}}
    with pytest.raises(UnknownSequence, match="'unknown' is not declared"):
        next_value("unknown")
    assert next_value("known") == 1
    assert "unknown" not in read_marks()
    settings.SNOWID_SEQUENCES = {"bad": {"kind": "weekly"}}
    with pytest.raises(InvalidSequence, match="kind"):
        next_value("bad")


def test_command_lists_and_raises(seq_backend, capsys):
    next_values("invoice", 7)
    call_command("snowid_sequences", "--json")
    rows = json.loads(capsys.readouterr().out)
    (row,) = [r for r in rows if r["name"] == "invoice"]
    assert row["current"] == 7
    assert row["mark"] >= 7
    if seq_backend == "redis":
        before = row["mark"]
        call_command("snowid_sequences", "--raise", "invoice", "--by", "5000")
        capsys.readouterr()
        call_command("snowid_sequences", "--json")
        (row,) = [r for r in json.loads(capsys.readouterr().out) if r["name"] == "invoice"]
        assert row["mark"] == before + 5000 == row["published"]
        assert row["headroom"] == row["mark"] - 7
        assert next_value("invoice") == 8
        call_command("snowid_sequences")
        assert "invoice" in capsys.readouterr().out
    else:
        with pytest.raises(CommandError, match="no mark to raise"):
            call_command("snowid_sequences", "--raise", "invoice", "--by", "5")
    with pytest.raises(CommandError, match="--by"):
        call_command("snowid_sequences", "--raise", "invoice", "--by", "0")
    with pytest.raises(CommandError, match="not a sequence name"):
        call_command("snowid_sequences", "--raise", "in{voice", "--by", "5")


@pytest.mark.redis
def test_serve_raises_a_low_mark(settings, capsys):
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    settings.SNOWID_SEQUENCES = {"s": {"min_step": 10, "max_step": 10}}
    next_values("s", 10)
    store = redis_store(settings)
    mark = store.state("s")["max"]
    store.client().hset(store.key("s"), "cur", mark)  # every value drawn: no headroom
    assert read_marks()["s"] == mark
    call_command("snowid_sequences", "--serve", "--rounds", "1")
    assert "raised the mark of s" in capsys.readouterr().out
    assert read_marks()["s"] == mark + 10


@pytest.mark.redis
def test_a_block_larger_than_the_step_is_covered_in_one_raise(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    settings.SNOWID_SEQUENCES = {"big": {"min_step": 10, "max_step": 100}}
    assert next_value("big") == 1
    block = next_values("big", 5000)
    assert list(block) == list(range(2, 5002))
    assert read_marks()["big"] >= 5001
    assert next_value("big") == 5002


@pytest.mark.redis
def test_minutes_left_holds_steady_while_nothing_is_drawn(settings):
    """A burst of 600 values in one second, then nothing: the minutes left stay what the
    five-minute rate gives (600 / 300 s), the second after the burst as in the burst's own
    second, and only grow as the burst leaves the window. (They once fell 300-fold the
    second after a burst, the one-second peak taken for the rate, and came back after.)"""
    from django_snowid.sequences.status import sequence_rows
    from django_snowid.sequences.stores import get_store

    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    settings.SNOWID_SEQUENCES = {"steady": {"min_step": 1_000_000, "max_step": 1_000_000}}
    clock = Clock(datetime(2026, 11, 23, 12, 0, 0, tzinfo=ZoneInfo("UTC")))  # a window start
    store = get_store()  # the store the status rows read, on the test's clock
    store.clock = clock
    spec = get_spec("steady")
    store.next_values(spec, 1, None)
    for _ in range(6):
        store.next_values(spec, 100, None)
    start = clock.now

    def minutes(after: float) -> tuple[float, int]:
        clock.now = start + after
        (row,) = [r for r in sequence_rows() if r["stored"] == "steady"]
        return row["minutes_left"], row["headroom"]

    left, headroom = minutes(0)
    assert left == round(headroom / (601 / 300) / 60, 1)
    readings = [minutes(after)[0] for after in (0, 1, 2, 3, 60, 299, 300, 450)]
    assert readings[:5] == [left] * 5
    assert readings == sorted(readings), readings  # nothing drawn: never falls


def test_a_sequence_starts_above_an_existing_column(seq_backend):
    """Invoices numbered by their ids move to a named sequence: it continues above the
    largest id, without a gap (database store), and never moves back."""
    from tests.testapp.models import PlainAuto

    PlainAuto.objects.bulk_create([PlainAuto(id=pk, name="old") for pk in (1, 2, 41, 17)])
    out = StringIO()
    call_command("snowid_sequences", "--start-above", "testapp.PlainAuto.id", "moved", stdout=out)
    assert "moved: continues above 41 (the largest testapp.PlainAuto.id is 41)" in out.getvalue()
    first = next_value("moved")
    assert first == 42 if seq_backend == "database" else first > 41
    call_command("snowid_sequences", "--start-above", "testapp.PlainAuto.id", "moved", stdout=out)
    assert next_value("moved") == first + 1  # again: nothing moved back


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("testapp.Nothing.id", "moved"), "names no column of an installed model"),
        (("testapp.PlainAuto.nothing", "moved"), "testapp.PlainAuto has no field 'nothing'"),
        (("testapp.PlainAuto.name", "moved"), "is a CharField, not a column of whole numbers"),
        (("testapp.PlainAuto.id", "no spaces"), "is not a sequence name"),
    ],
)
def test_start_above_refuses_what_it_cannot_continue_above(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("snowid_sequences", "--start-above", *args, stdout=StringIO())
