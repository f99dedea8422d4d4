"""The online switch's short steps and ``--undo`` ask for their locks under
``lock_timeout`` and ask again while another transaction holds the table, with Django's
PostgreSQL backend on psycopg2 (whose errors carry ``pgcode``, not ``sqlstate``)."""

from __future__ import annotations

import selectors
import signal
import subprocess
import time

import pytest
from django.conf import settings

from tests.adopt.test_adopt import POPULATE, pairs
from tests.adopt_project import AdoptProject, backend

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def read_until(process: subprocess.Popen[str], text: str, *, limit: float = 120) -> str:
    """``process``'s output up to the line holding ``text`` (a guard: at most ``limit``
    seconds, so that a process that never says it fails the test instead of hanging it)."""
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    seen, end = [], time.monotonic() + limit
    while time.monotonic() < end:
        if not selector.select(timeout=1):
            continue
        line = process.stdout.readline()
        if not line:
            break  # ended without saying it
        seen.append(line)
        if text in line:
            return "".join(seen)
    process.kill()
    stderr = process.stderr.read() if process.stderr else ""
    raise AssertionError(f"never said {text!r}: {''.join(seen)}{stderr}")


class Holder:
    """A transaction of the test's own holding ``table`` (ACCESS SHARE: readers go on)."""

    def __init__(self, project: AdoptProject, table: str) -> None:
        import psycopg

        db = settings.DATABASES["default"]
        self.connection = psycopg.connect(
            host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=project.name
        )
        self.connection.execute(f"LOCK TABLE {table} IN ACCESS SHARE MODE")

    def release(self) -> None:
        self.connection.rollback()
        self.connection.close()


def test_short_steps_and_undo_retry_a_lock_not_granted_on_psycopg2(tmp_path):
    if backend() != "postgresql":
        pytest.skip("the online switch is PostgreSQL's")
    pytest.importorskip("psycopg2")
    project = AdoptProject(tmp_path)
    project.env["SNOWID_TEST_PG_DRIVER"] = "psycopg2"
    try:
        project.ok("migrate", "-v", "0")
        project.shell(POPULATE.format(rows=4))
        assert "psycopg2" in project.shell(
            "from django.db import connection; print(connection.Database.__name__)"
        )
        before = pairs(project)
        command = ["-m", "django", "snowid_adopt", "adoptapp.Shelf", "--lock-timeout-ms", "50"]
        pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}

        holder = Holder(project, "adoptapp_shelf")
        run = project.popen(*command, "--execute", **pipes)
        read_until(run, "lock not granted in 50 ms, retrying")
        holder.release()
        read_until(run, "to the shadow columns")  # the backfill: every trigger made
        run.send_signal(signal.SIGKILL)
        run.wait(60)

        holder = Holder(project, "adoptapp_shelf")
        undo = project.popen(*command, "--undo", **pipes)
        read_until(undo, "lock not granted in 50 ms, retrying")
        holder.release()
        assert "adoptapp.Shelf: undone" in read_until(undo, "undone")
        assert undo.wait(60) == 0
        shadows = project.sql(
            ["SELECT count(*) FROM information_schema.columns WHERE column_name LIKE '%%_snowid'"]
        )
        assert shadows.strip() == "[(0,)]"
        assert pairs(project) == before
    finally:
        project.drop()
