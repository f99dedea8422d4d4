"""Free-threaded CPython (no GIL): threads sharing one generator never get the same id.

Runs the pure core in a free-threaded interpreter, found as ``SNOWID_FREE_THREADED_PYTHON``,
``python3.13t``/``python3.14t`` on the ``PATH``, or a pyenv version whose name ends in
``t`` (``pyenv install 3.13t``); skipped without one.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

import pytest

from tests.support import ROOT

SCRIPT = """
import sys, threading
from django_snowid.core import PRESETS, SnowflakeGenerator
from django_snowid.core.generator import FREE_THREADED

generator = SnowflakeGenerator(PRESETS["classic"], 1)
THREADS, EACH = 8, 200_000
barrier = threading.Barrier(THREADS)
issued = [[] for _ in range(THREADS)]

def work(i):
    next_id = generator.next_id
    barrier.wait()
    issued[i] = [next_id() for _ in range(EACH)]

threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
everything = [i for ids in issued for i in ids]
print(sys._is_gil_enabled(), FREE_THREADED, len(everything), len(set(everything)))
"""


def free_threaded_python() -> str | None:
    found = os.environ.get("SNOWID_FREE_THREADED_PYTHON")
    found = found or shutil.which("python3.14t") or shutil.which("python3.13t")
    pyenv = os.path.expanduser("~/.pyenv/versions/3.1[3-9]*t/bin/python3")
    return found or next(iter(sorted(glob.glob(pyenv), reverse=True)), None)


@pytest.mark.slow
def test_threads_of_a_free_threaded_build_never_share_an_id():
    python = free_threaded_python()
    if python is None:
        pytest.skip("no free-threaded CPython here (pyenv install 3.13t)")
    run = subprocess.run(
        [python, "-c", SCRIPT],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHON_GIL": "0"},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    gil, free_threaded, count, distinct = run.stdout.split()
    assert (gil, free_threaded) == ("False", "True"), "not a free-threaded interpreter"
    assert int(distinct) == int(count) == 1_600_000, "threads got the same id"
