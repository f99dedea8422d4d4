"""What the Makefile's targets install, read from ``make -n`` (nothing is run)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")


def planned(*args: str) -> str:
    """The commands ``make`` would run for ``args``, every rule forced (``-B``)."""
    done = subprocess.run(
        ["make", "-n", "-B", "--no-print-directory", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_docs_installs_the_app_and_the_docs_extra_only():
    commands = planned("docs", "DOCS_VENV=/nonexistent/docs-venv")
    installs = [line for line in commands.splitlines() if "pip install" in line]
    assert installs == ['/nonexistent/docs-venv/bin/python -m pip install -q -e ".[docs]"'], (
        commands
    )
    assert "/nonexistent/docs-venv/bin/sphinx-build -W" in commands


def test_make_test_still_builds_the_docs_strictly():
    commands = planned("test")
    assert "sphinx-build -W --keep-going -n" in commands
