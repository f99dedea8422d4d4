"""A feed never skips a committed row: interleavings stepped one statement at a time, in
which a row drawn earlier commits after a later one. The naive ``pk > last seen`` poll
and DRF's CursorPagination miss it; polling with ``min_id`` below the settled id does not."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection, transaction

from django_snowid.exceptions import SettledBoundError
from django_snowid.pagination import settled
from django_snowid.settings_layouts import get_layout
from tests.feedapp import api
from tests.feedapp.models import Post
from tests.pagination.feeds import START, id_at
from tests.pagination.pollers import DrfCursor, Naive, Ours, Writer
from tests.support import FakeClock

pytestmark = pytest.mark.django_db(transaction=True)

#: Rows committed after the late one was drawn: more than a page of DRF's, so that its
#: client moves past the late row's place, as it does when the rows keep coming.
LATER = api.DrfCursorPages.page_size + 5


@pytest.fixture
def writers():
    made: list[Writer] = []

    def make() -> Writer:
        made.append(Writer())
        return made[-1]

    yield make
    for writer in made:
        writer.close()


def on_postgresql() -> bool:
    return connection.vendor == "postgresql"


def insert(*ids: int) -> None:
    Post.objects.bulk_create(Post(id=i, body="w") for i in ids)


def every_poller(client, start: int) -> tuple[Ours, DrfCursor, Naive, Ours]:
    """Ours, DRF's, the naive one, and ours with ``settle = False``."""
    return (
        Ours(client, start),
        DrfCursor(client),
        Naive(start),
        Ours(client, start, "/feed/browse/"),
    )


def assert_only_ours_served_everything(pollers, ids: list[int]) -> None:
    ours, *others = pollers
    late = ids[0]
    assert {i: ours.served[i] for i in ids} == dict.fromkeys(ids, 1)
    assert max(ours.served.values()) == 1
    for other in others:  # the defect, shown: each of them served the later rows only
        assert late not in other.served
        assert all(other.served[i] == 1 for i in ids[1:])


def test_a_late_commit_is_served_once_the_window_settles(client, settings, writers, monkeypatch):
    """The settle window (SQLite, MariaDB): a id drawn before two later rows commit,
    committed after them, on a clock the test moves."""
    if on_postgresql():
        pytest.skip("PostgreSQL settles by its running transactions (the tests below)")
    clock = FakeClock(int((START + timedelta(seconds=4)).timestamp() * 1e9))
    monkeypatch.setattr(api.Pages, "clock", staticmethod(clock))
    settings.SNOWID_FEED_SETTLE_WINDOW_S = 10
    layout = get_layout()
    start, late = id_at(layout, 0), id_at(layout, 1)
    later = [id_at(layout, 2, sequence=i) for i in range(LATER)]
    insert(start)
    pollers = every_poller(client, start)
    slow, fast = writers(), writers()
    slow.step(lambda: transaction.set_autocommit(False))  # drew ``late``, has not written
    fast.step(lambda: insert(*later))
    for poller in pollers:
        poller.poll()
    assert pollers[0].served.total() == 0  # nothing is settled yet
    slow.step(lambda: (insert(late), transaction.commit(), transaction.set_autocommit(True)))
    clock.advance_ms(20_000)
    for poller in pollers:
        poller.poll()
    assert_only_ours_served_everything(pollers, [late, *later])


def test_a_running_transaction_holds_the_feed_back(client, settings, writers):
    """PostgreSQL: the transaction that drew ``late`` is running; the settled id stays
    below it while two later rows commit, and passes them all once it commits."""
    if not on_postgresql():
        pytest.skip("the database watermark is PostgreSQL's")
    settings.SNOWID_FEED_SETTLE_MARGIN_MS = 0  # ids drawn inside their transactions
    start = Post.objects.create(body="start").pk
    pollers = every_poller(client, start)
    slow, fast = writers(), writers()

    def begin_and_draw() -> int:
        transaction.set_autocommit(False)
        connection.cursor().execute("SELECT 1")  # the transaction has begun
        return Post.objects.create(body="late").pk

    late = slow.step(begin_and_draw)
    later = fast.step(lambda: [Post.objects.create(body="b").pk for _ in range(LATER)])
    assert late < later[0] < later[-1]
    for poller in pollers:
        poller.poll()
    assert pollers[0].served.total() == 0 and pollers[0].settled <= late
    slow.step(lambda: (transaction.commit(), transaction.set_autocommit(True)))
    for _ in range(10_000):  # the settled id passes them at the next millisecond
        pollers[0].poll()
        if pollers[0].settled > later[-1]:
            break
    for poller in pollers[1:]:
        poller.poll()
    assert_only_ours_served_everything(pollers, [late, *later])


def database_now() -> object:
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        return cursor.fetchone()[0]


def test_the_margin_covers_an_id_drawn_before_its_transaction_began(settings):
    """PostgreSQL: an id drawn 30 s before its transaction began (a paused process, a
    database clock ahead) is not yet settled with a 60 s margin; with none, it would be,
    though its row has not even been written."""
    if not on_postgresql():
        pytest.skip("the database watermark is PostgreSQL's")
    layout = get_layout()
    drawn = layout.compose(layout.tick_at(database_now() - timedelta(seconds=30)), 3, 0)
    settings.SNOWID_FEED_SETTLE_MARGIN_MS = 60_000
    assert settled(layout, using="default").id <= drawn
    settings.SNOWID_FEED_SETTLE_MARGIN_MS = 0
    assert settled(layout, using="default").id > drawn  # what the margin is for


def test_the_watermark_refuses_an_old_snapshot(settings):
    if not on_postgresql():
        pytest.skip("the database watermark is PostgreSQL's")
    with transaction.atomic():
        connection.cursor().execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        with pytest.raises(SettledBoundError, match="REPEATABLE READ"):
            settled(get_layout(), using="default")
    with transaction.atomic():  # READ COMMITTED: each statement sees what committed
        assert settled(get_layout(), using="default").source == "database"


def test_the_window_is_timed_by_the_clock_given(settings):
    if on_postgresql():
        pytest.skip("PostgreSQL settles by its running transactions")
    settings.SNOWID_FEED_SETTLE_WINDOW_S = 2.5
    layout = get_layout()
    clock = FakeClock(int(START.timestamp() * 1e9))
    point = settled(layout, using="default", clock=clock)
    assert point.source == "window"
    assert point.id == layout.min_id_at(START - timedelta(seconds=2.5))
    assert point.at == START - timedelta(seconds=2.5)


def test_sessions_hidden_from_the_role_are_counted(settings):
    """PostgreSQL: a role that cannot see other roles' sessions learns that some are
    hidden (the settled id then also waits for the window), instead of reading them as
    idle."""
    if not on_postgresql():
        pytest.skip("the database watermark is PostgreSQL's")
    import psycopg

    from django_snowid.pagination.settle import _OLDEST_TRANSACTION

    role = f"snowid_reader_{connection.settings_dict['NAME'][-12:]}".replace("-", "_")
    with connection.cursor() as cursor:
        cursor.execute(f"DROP ROLE IF EXISTS {role}")
        cursor.execute(f"CREATE ROLE {role} LOGIN")
    params = connection.get_connection_params()
    try:
        with transaction.atomic():  # a session of another role, in a transaction
            connection.cursor().execute("SELECT 1")
            with psycopg.connect(
                host=params["host"], port=params["port"], dbname=params["dbname"], user=role
            ) as reader:
                _, hidden, _, _ = reader.execute(_OLDEST_TRANSACTION).fetchone()
            with connection.cursor() as cursor:
                cursor.execute(_OLDEST_TRANSACTION)
                _, seen_by_owner, _, _ = cursor.fetchone()
        assert hidden >= 1 and seen_by_owner == 0
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP ROLE IF EXISTS {role}")
