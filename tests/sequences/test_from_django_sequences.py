"""The import from django-sequences records what it imported: any later change to
django-sequences' table (old code still drawing from it, whichever way its values went)
is a database check error and a failing health check; and a bad row stops the import
before anything is written."""

from __future__ import annotations

import time
from io import StringIO

import pytest
import sequences
from django.core.checks import run_checks
from django.core.management import CommandError, call_command
from django.core.management.base import SystemCheckError
from django.db import OperationalError

from django_snowid.health import probes
from django_snowid.sequences import compat
from django_snowid.sequences.stores.database import read_marks
from tests.support import Children

pytestmark = pytest.mark.django_db(transaction=True)

STILL_DRAWING = "old code is still drawing from django-sequences"


def _import() -> str:
    out = StringIO()
    call_command("snowid_sequences", "--import-django-sequences", stdout=out)
    return out.getvalue()


def _errors() -> list[str]:
    found = run_checks(databases=["default"], include_deployment_checks=False)
    return [m.msg for m in found if m.id == "django_snowid.E801"]


def _old_writer(drawn, queue, stop) -> None:
    """Old code that goes on drawing invoice numbers from django-sequences."""
    values = []
    while not stop.is_set():
        try:
            values.append(sequences.get_next_value("invoices"))
        except OperationalError:  # SQLite's one writer: the import holds the lock
            continue
        drawn.value = len(values)
        time.sleep(0.002)
    queue.put(values)


def _wait_for(drawn, count: int) -> None:
    deadline = time.monotonic() + 60
    while drawn.value < count:
        assert time.monotonic() < deadline, "the old writer stopped drawing"
        time.sleep(0.01)


@pytest.fixture
def database_store(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "database"


@pytest.mark.slow
def test_an_old_writer_drawing_through_the_import_is_reported(database_store):
    with Children() as children:
        drawn = children.context.Value("i", 0)
        children.start(_old_writer, drawn, children.queue, children.stop)
        _wait_for(drawn, 20)
        _import()  # the old code goes on: the rollout forgot a worker
        _wait_for(drawn, drawn.value + 50)
        children.stop.set()
        (old,) = children.results()
    ours = list(compat.get_next_values(300, "invoices"))

    assert set(old) & set(ours), "the old writer and ours issued no value twice: no test"
    with pytest.raises(SystemCheckError, match=r"django_snowid\.E801"):
        call_command("check", "--database", "default")
    (message,) = _errors()
    assert STILL_DRAWING in message and "'invoices'" in message
    findings = probes.sequence_store_reachable()
    assert any(f.fatal and STILL_DRAWING in f.message for f in findings), findings


def test_old_code_drawing_below_ours_after_the_import_is_reported(database_store):
    for _ in range(10):
        sequences.get_next_value("invoices")
    _import()
    compat.get_next_values(300, "invoices")  # ours went far ahead
    assert _errors() == []
    sequences.get_next_value("invoices")  # 11: below ours, issued by us already
    (message,) = _errors()
    assert STILL_DRAWING in message
    assert not [m for m in run_checks(databases=["default"]) if m.id == "django_snowid.W800"]


@pytest.mark.parametrize("change", ["a new sequence", "a deleted sequence", "a reset"])
def test_any_change_to_the_old_table_is_reported(database_store, change):
    sequences.get_next_value("invoices")
    sequences.get_next_value("cases", initial_value=0, reset_value=2)
    _import()
    if change == "a new sequence":
        sequences.get_next_value("claims")
    elif change == "a deleted sequence":
        sequences.delete("invoices")
    else:
        sequences.get_next_value("cases", initial_value=0, reset_value=2)  # back to 0
    assert len(_errors()) == 1


def test_importing_again_once_the_old_code_stopped_records_afresh(database_store):
    sequences.get_next_value("invoices")
    _import()
    sequences.get_next_value("invoices")
    assert len(_errors()) == 1
    _import()
    assert _errors() == []
    assert compat.get_next_value("invoices") == 3
    call_command("check", "--database", "default")
    assert not [f for f in probes.sequence_store_reachable() if f.fatal]


def test_a_bad_row_stops_the_import_before_anything_is_written(database_store, settings):
    settings.SNOWID_SEQUENCES = {"z-daily": {"kind": "daily"}}
    sequences.get_next_values(5, "a-invoices")
    sequences.get_next_value("z-daily")
    with pytest.raises(CommandError, match="declared daily"):
        _import()
    assert read_marks() == {}, "the import stopped halfway"
    assert _errors() == []  # nothing was recorded either


def test_the_import_waits_for_another_writer_on_sqlite(database_store):
    """On SQLite the import takes the write lock before it reads, so another writer busy
    at that moment makes it wait (the busy timeout) instead of failing at once."""
    import sqlite3
    import threading

    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("SQLite's lock upgrade")
    sequences.get_next_value("invoices")
    other = sqlite3.connect(connection.settings_dict["NAME"], check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another writer, in the middle of its transaction
    other.execute("UPDATE sequences_sequence SET last = last")
    threading.Timer(0.3, other.commit).start()
    assert "Imported 1 sequences" in _import()
    other.close()
