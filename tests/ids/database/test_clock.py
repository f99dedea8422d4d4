"""The database default's clock policy, on a private PostgreSQL server whose clock
libfaketime steps back while ids are drawn: small steps continue on the last tick, large
ones refuse with SQLSTATE SNW01, and no id ever repeats."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from django_snowid.core.layout import layout_from_spec
from django_snowid.ids.database.geometry import Geometry
from django_snowid.ids.database.postgresql import ERRCODE, install_statements
from tests.conftest import IN_CI
from tests.support import free_port

FAKETIME_LIBRARY = os.environ.get(
    "SNOWID_LIBFAKETIME", "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
)


def _pg_bin() -> Path | None:
    found = shutil.which("pg_ctl")
    if found is None:
        return None
    return Path(os.path.realpath(found)).parent


def _missing() -> str:
    if _pg_bin() is None:
        return "no pg_ctl/initdb on PATH"
    if not os.path.exists(FAKETIME_LIBRARY):
        return f"no libfaketime at {FAKETIME_LIBRARY} (Debian: apt-get install libfaketime)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed"
    return ""


class FakeClockServer:
    """A PostgreSQL server in ``workdir`` whose clock is the real one shifted by what the
    file ``faketime`` says (``+0``, ``-0.004``, ``-2``: seconds), read at every call.
    PostgreSQL refuses to run as root: as root the server runs as the ``postgres`` user."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.data = workdir / "data"
        self.clock_file = workdir / "faketime"
        self.port = free_port()
        self.bin = _pg_bin()
        self.as_postgres = os.geteuid() == 0

    def _run(self, *command: str, env: dict[str, str] | None = None) -> None:
        if self.as_postgres:
            prefix = " ".join(f"{k}={v}" for k, v in (env or {}).items())
            subprocess.run(
                ["su", "postgres", "-c", f"{prefix} {' '.join(command)}"],
                check=True,
                capture_output=True,
                cwd="/tmp",
            )
        else:
            subprocess.run(
                command, check=True, capture_output=True, env={**os.environ, **(env or {})}
            )

    def shift(self, offset: str) -> None:
        self.clock_file.write_text(f"{offset}\n")

    def start(self) -> None:
        self.workdir.chmod(0o777)
        self.shift("+0")
        self.clock_file.chmod(0o666)
        self._run(f"{self.bin}/initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust")
        options = f"'-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1'"
        self._run(
            f"{self.bin}/pg_ctl",
            "-D",
            str(self.data),
            "-o",
            options if self.as_postgres else options.strip("'"),
            "-l",
            str(self.workdir / "log"),
            "-w",
            "start",
            env={
                "LD_PRELOAD": FAKETIME_LIBRARY,
                "FAKETIME_TIMESTAMP_FILE": str(self.clock_file),
                "FAKETIME_NO_CACHE": "1",
                "FAKETIME_DONT_FAKE_MONOTONIC": "1",
            },
        )

    def stop(self) -> None:
        self._run(f"{self.bin}/pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")

    def connect(self):  # type: ignore[no-untyped-def]
        import psycopg

        return psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname="postgres", autocommit=True
        )


@pytest.fixture
def server() -> Iterator[FakeClockServer]:
    missing = _missing()
    if missing:
        if IN_CI:
            pytest.fail(f"CI=true and {missing}")
        pytest.skip(f"SKIPPED, TOOL MISSING: {missing}")
    # Not pytest's tmp_path: its parents are private to this user, and as root the
    # server runs as the postgres user.
    workdir = Path(tempfile.mkdtemp(prefix="snowid-faketime-pg-"))
    running = FakeClockServer(workdir)
    try:
        running.start()
        yield running
    finally:
        if (workdir / "data" / "postmaster.pid").exists():
            running.stop()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.mark.slow
def test_a_database_clock_stepped_back_never_repeats_an_id(server):
    import psycopg

    layout = layout_from_spec({"time_bits": 41, "node": {"worker": 8}, "sequence_bits": 14})
    geometry = Geometry.of(layout)
    with server.connect() as conn:
        # A tolerance of 1 s: the small step (0.5 s) stays inside it however slowly this
        # machine runs the inserts around the step.
        for statement in install_statements(geometry, schema="public", node=255, tolerance_ms=1000):
            conn.execute(statement)
        conn.execute(f"CREATE TABLE t (id bigint PRIMARY KEY DEFAULT {geometry.function}(), x int)")
        tick = f"floor(date_part('epoch', clock_timestamp()) * 1000 - {geometry.epoch_ms})::bigint"

        def insert(count: int) -> list[tuple[int, int]]:
            """(id, the server clock's tick just after it) of ``count`` single-row INSERTs."""
            return [
                conn.execute(f"INSERT INTO t (x) VALUES (1) RETURNING id, {tick}").fetchone()
                for _ in range(count)
            ]

        before = insert(300)
        server.shift("-0.5")  # 0.5 s back: within the tolerance, continue on the last tick
        small_step = insert(300)
        server.shift("-5")  # 5 s back: refuse
        with pytest.raises(psycopg.Error) as refused:
            insert(1)
        server.shift("+0")
        after = insert(300)
        count, distinct = conn.execute("SELECT count(*), count(DISTINCT id) FROM t").fetchone()

    assert refused.value.sqlstate == ERRCODE
    assert "behind the last id issued" in str(refused.value)
    ids = [value for value, _ in before + small_step + after]
    assert ids == sorted(ids) and len(set(ids)) == len(ids) == count == distinct == 900
    assert {layout.decode(value).node for value in ids} == {255}
    # The small step was absorbed: some ids carry a tick ahead of the server's clock
    # (the last tick, continued), none more than the tolerance ahead.
    ahead = [layout.decode(value).tick - clock for value, clock in small_step]
    assert max(ahead) > 0 and max(ahead) <= 1000
