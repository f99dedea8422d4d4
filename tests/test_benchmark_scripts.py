"""The benchmark scripts keep running against the code they measure: one whose calls no
longer match a script's arguments fails here, not in a user's hands."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.redis
def test_redis_capacity_measures_every_script():
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/bench_redis_capacity.py",
            "--seconds",
            "0.2",
            "--clients",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rates = dict(re.findall(r"^(\S.*?)\s+([\d,]+) calls/s", done.stdout, re.MULTILINE))
    assert len(rates) == 5, done.stdout
    assert all(int(rate.replace(",", "")) > 0 for rate in rates.values()), rates


@pytest.mark.slow
@pytest.mark.redis
def test_restructure_compares_both_trees():
    """Needs the git history (the tree before the restructuring is exported from it)."""
    known = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", "ef15948^{commit}"])
    if known.returncode != 0:
        pytest.skip("not a git checkout holding ef15948, the tree bench_restructure.py compares")
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/bench_restructure.py",
            *("--rounds", "1", "--creates", "20", "--bulks", "1", "--db", "sqlite"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    counts = dict(
        re.findall(r"^  sqlite\s+(SQL statements|Redis commands)\s+(.*)$", done.stdout, re.M)
    )
    assert set(counts) == {"SQL statements", "Redis commands"}, done.stdout
    for line in counts.values():  # old, old without send-ahead, new: one create() each
        figures = [float(f) for f in re.findall(r"\s([\d.]+)(?=\s|$)", line)]
        assert len(figures) == 3 and all(f >= 1 for f in figures), line
    parts = dict(
        re.findall(r"^  sqlite\s+(database call|Redis replies|the rest)\s+(.*)$", done.stdout, re.M)
    )
    assert set(parts) == {"database call", "Redis replies", "the rest"}, done.stdout
    for line in parts.values():  # microseconds of one create(), each tree
        figures = [float(f.replace(",", "")) for f in re.findall(r"([\d,.]+) µs", line)]
        assert len(figures) == 3 and all(f > 0 for f in figures), line
    round_trip = re.search(r"^  Redis PING round trip: (\d+) µs, (\d+) µs while", done.stdout, re.M)
    assert round_trip and all(int(us) > 0 for us in round_trip.groups()), done.stdout
