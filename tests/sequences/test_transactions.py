"""Two transactions drawing one sequence, on real threads (database store, our API and
the compat module): the second waits for the first and sees its commit; a rolled-back
value is issued again; ``nowait`` refuses at once and leaves the caller's transaction
usable. PostgreSQL and MariaDB lock the sequence's row; SQLite the whole database."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import OperationalError, connection, connections, transaction

from django_snowid.exceptions import SequenceLocked
from django_snowid.sequences import compat, next_value

# Waits for row locks are read from the server (MariaDB's innodb_trx, which the server
# refreshes at most every 100 ms when read from several connections at once): one worker.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("lock-waits")]

TIMEOUT_S = 60


@pytest.fixture(autouse=True)
def _database_store(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "database"


def _draw_our(name: str, **options: Any) -> int:
    return next_value(name, **options)


def _draw_compat(name: str, **options: Any) -> int:
    return compat.get_next_value(name, **options)


API = pytest.mark.parametrize("draw", [_draw_our, _draw_compat], ids=["ours", "compat"])


class Holder(threading.Thread):
    """Draws in a transaction, then holds it open until told to commit or roll back."""

    def __init__(self, draw: Callable[[], int]) -> None:
        super().__init__(daemon=True)
        self.draw = draw
        self.drawn = threading.Event()
        self.finish = threading.Event()
        self.commit = True
        self.value: int | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with transaction.atomic():
                self.value = self.draw()
                self.drawn.set()
                assert self.finish.wait(TIMEOUT_S)
                if not self.commit:
                    transaction.set_rollback(True)
        except BaseException as exc:
            self.error = exc
            self.drawn.set()
        finally:
            connections.close_all()

    def end(self, *, commit: bool) -> None:
        self.commit = commit
        self.finish.set()
        self.join(TIMEOUT_S)
        assert self.error is None, self.error


class Drawer(threading.Thread):
    """Draws once, in a transaction of its own, and commits."""

    def __init__(self, draw: Callable[[], int]) -> None:
        super().__init__(daemon=True)
        self.draw = draw
        self.value: int | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with transaction.atomic():
                self.value = self.draw()
        except BaseException as exc:
            self.error = exc
        finally:
            connections.close_all()


def _waiting_on_a_lock() -> bool:
    """Whether some other session is waiting for a lock (MariaDB: on the whole server,
    so another test run's wait may end the wait early: the values still tell)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()"
            )
        elif connection.vendor == "mysql":
            cursor.execute(
                "SELECT count(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'"
            )
        else:
            return True  # SQLite: nothing to see; the values below still tell
        return bool(cursor.fetchone()[0])


def _until_blocked(drawer: Drawer) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not _waiting_on_a_lock():
        assert drawer.is_alive(), (
            f"the second transaction did not wait: {drawer.value} {drawer.error!r}"
        )
        assert time.monotonic() < deadline, "the second transaction never waited"
        # InnoDB refreshes what innodb_trx shows only when it was not read for 0.1 s.
        time.sleep(0.2)


def _first(draw: Callable[..., int], name: str, **options: Any) -> Holder:
    holder = Holder(lambda: draw(name, **options))
    holder.start()
    assert holder.drawn.wait(TIMEOUT_S)
    assert holder.error is None, holder.error
    return holder


@API
@pytest.mark.parametrize("commit", [True, False], ids=["commit", "rollback"])
def test_second_transaction_waits_for_the_first(draw, commit):
    draw("shared")  # the row exists: both transactions lock it
    holder = _first(draw, "shared")
    assert holder.value == 2
    drawer = Drawer(lambda: draw("shared"))
    drawer.start()
    _until_blocked(drawer)
    holder.end(commit=commit)
    drawer.join(TIMEOUT_S)
    assert drawer.error is None, drawer.error
    # Committed: the next value; rolled back: the same value, issued again.
    assert drawer.value == (3 if commit else 2)
    assert draw("shared") == drawer.value + 1


@API
@pytest.mark.parametrize("commit", [True, False], ids=["commit", "rollback"])
def test_cycling_sequence_waits_for_the_first(draw, commit):
    options = {"initial_value": 0, "reset_value": 2}
    draw("cycle", **options)  # 0
    holder = _first(draw, "cycle", **options)
    assert holder.value == 1
    drawer = Drawer(lambda: draw("cycle", **options))
    drawer.start()
    _until_blocked(drawer)
    holder.end(commit=commit)
    drawer.join(TIMEOUT_S)
    assert drawer.error is None, drawer.error
    assert drawer.value == (0 if commit else 1)


@API
def test_nowait_refuses_at_once_and_the_transaction_goes_on(draw):
    draw("held")
    holder = _first(draw, "held")
    try:
        with transaction.atomic():
            with pytest.raises(SequenceLocked, match="held by another transaction"):
                draw("held", nowait=True)
            # The caller's transaction is still usable.
            assert compat.get_last_value("held") == 1  # the holder's 2 is not committed
            if connection.vendor != "sqlite":  # SQLite's lock is the whole database's
                assert draw("other", nowait=True) == 1
    finally:
        holder.end(commit=True)
    assert draw("held", nowait=True) == 3


@API
def test_nowait_in_autocommit(draw):
    draw("held")
    holder = _first(draw, "held")
    try:
        with pytest.raises(SequenceLocked):
            draw("held", nowait=True)
        if connection.vendor != "sqlite":  # SQLite's lock is the database's
            assert draw("free", nowait=True) == 1
    finally:
        holder.end(commit=False)
    assert draw("held", nowait=True) == 2


def test_compat_nowait_is_an_operational_error_too():
    """django-sequences raises Django's OperationalError there: except clauses written for
    it still catch ours."""
    compat.get_next_value("held")
    holder = _first(compat.get_next_value, "held")
    try:
        with pytest.raises(OperationalError):
            compat.get_next_value("held", nowait=True)
        with pytest.raises(compat.SequenceLockedError):
            compat.Sequence("held").get_next_value(nowait=True)
        with pytest.raises(SequenceLocked):
            compat.get_next_values(5, "held", nowait=True)
    finally:
        holder.end(commit=True)
