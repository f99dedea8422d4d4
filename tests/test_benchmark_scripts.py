"""The benchmark scripts keep running against the code they measure: one whose calls no
longer match a script's arguments fails here, not in a user's hands."""

from __future__ import annotations

import os
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
def test_script_runners_are_compared():
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_scripts.py", "--calls", "200", "--repeat", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = re.findall(r"^(RedisScript|redis-py Script).*?\s([\d.]+)\s+[\d.]+\s", done.stdout, re.M)
    assert len(rows) == 4 and all(float(us) > 0 for _, us in rows), done.stdout


@pytest.mark.slow
@pytest.mark.redis
def test_metrics_on_and_off_are_compared():
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_metrics.py", "--calls", "200", "--repeat", "1"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "benchmarks.settings"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ratios = re.findall(r"ratio ([\d.]+) ", done.stdout)
    assert len(ratios) == 3 and all(float(r) > 0 for r in ratios), done.stdout
