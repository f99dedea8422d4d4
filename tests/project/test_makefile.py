"""What the Makefile's targets install, read from ``make -n`` (nothing is run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")


def planned(*args: str, tmp_path: Path) -> str:
    """The commands ``make`` would run for ``args``, every rule forced (``-B``). Lines that
    run make again run even with ``-n``: their stage times go to a file of the test's."""
    done = subprocess.run(
        ["make", "-n", "-B", "--no-print-directory", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "STAGE_TIMES": str(tmp_path / "stage-times")},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_docs_installs_the_app_and_the_docs_extra_only(tmp_path):
    commands = planned("docs", "DOCS_VENV=/nonexistent/docs-venv", tmp_path=tmp_path)
    installs = [line for line in commands.splitlines() if "pip install" in line]
    assert installs == ['/nonexistent/docs-venv/bin/python -m pip install -q -e ".[docs]"'], (
        commands
    )
    assert "/nonexistent/docs-venv/bin/sphinx-build -W" in commands


def test_make_test_still_builds_the_docs_strictly(tmp_path):
    commands = planned("test", tmp_path=tmp_path)
    assert "sphinx-build -W --keep-going -n" in commands


def test_make_test_runs_every_database_and_django_version_with_durations(tmp_path):
    runs = [line for line in planned("test", tmp_path=tmp_path).splitlines() if "/pytest " in line]
    assert all("--durations=20" in line for line in runs), runs

    def ran(venv: str, database: str, marks: str) -> bool:
        return any(
            f"{venv}/bin/pytest " in line
            and (f"SNOWID_TEST_DB={database}" in line) == (database != "sqlite")
            and f'-m "{marks}"' in line
            for line in runs
        )

    for database in ("sqlite", "postgresql", "mariadb"):
        on_db = "" if database == "sqlite" else "django_db and "
        assert ran(".venv", database, f"{on_db}not slow"), database
        assert ran(".venv", database, f"{on_db}slow"), database  # the load tests
    assert ran(".venv-django42", "sqlite", "not slow")
    if "test-django6: SKIPPED" not in planned("test-django6", tmp_path=tmp_path):
        for database in ("sqlite", "postgresql", "mariadb"):
            on_db = "" if database == "sqlite" else "django_db and "
            assert ran(".venv-django6", database, f"{on_db}not slow"), database


def test_a_stage_keeps_its_time_and_status_and_the_summary_tells_them(tmp_path):
    env = {**os.environ, "STAGE_TIMES": str(tmp_path / "times")}
    stage = str(ROOT / "scripts" / "stage")
    ok = subprocess.run([stage, "first", "true"], env=env, capture_output=True, text=True)
    failed = subprocess.run(
        [stage, "second", "sh", "-c", "echo held; exit 3"],
        env={**env, "STAGE_BUFFER": "1"},
        capture_output=True,
        text=True,
    )
    assert (ok.returncode, failed.returncode) == (0, 3)
    assert failed.stdout == "=== second\nheld\n"
    summary = subprocess.run([stage, "--summary"], env=env, capture_output=True, text=True)
    lines = summary.stdout.splitlines()
    assert lines[1].split()[0] == "first" and "FAILED" not in lines[1]
    assert lines[2].split()[0] == "second" and lines[2].endswith("FAILED (exit 3)")
    assert lines[3].startswith("  wall clock, first start to last end")


def test_tests_of_one_xdist_group_run_on_one_worker(tmp_path):
    """make test's runs rely on it (a module's costly fixture, the lock-wait tests)."""
    for name in ("a", "b"):
        (tmp_path / f"test_{name}.py").write_text(
            "import pytest\n\n"
            "@pytest.mark.xdist_group('together')\n"
            "@pytest.mark.parametrize('i', range(4))\n"
            "def test_grouped(i):\n    pass\n\n"
            "@pytest.mark.parametrize('i', range(4))\n"
            "def test_free(i):\n    pass\n"
        )
    (tmp_path / "none.ini").write_text("[pytest]\n")  # not this project's settings
    command = [sys.executable, "-m", "pytest", "-p", "no:django", "-p", "no:cacheprovider"]
    command += ["-n", "2", "--dist", "loadgroup", "-v", "-c", str(tmp_path / "none.ini")]
    done = subprocess.run(
        [*command, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ran = [line for line in done.stdout.splitlines() if line.startswith("[gw")]
    workers = {line.split()[0] for line in ran if "test_grouped" in line}
    assert len(ran) == 16 and len(workers) == 1, done.stdout
