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
def test_audit_benchmark_reads_every_row():
    """On PostgreSQL, in a database of its own: a few rows, each pass printed."""
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/bench_audit.py",
            "--rows",
            "3000",
            "--batch-size",
            "500",
            "--traced-rows",
            "1000",
            "--repeat",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rates = re.findall(r"^  (SELECT|keyset|snowid_audit).*?\s([\d,]+)\s+[\d.]+$", done.stdout, re.M)
    assert [what for what, _ in rates] == ["SELECT", "keyset", "snowid_audit"], done.stdout
    assert all(int(rate.replace(",", "")) > 0 for _, rate in rates), done.stdout
    assert "peak RSS after every pass" in done.stdout


@pytest.mark.slow
def test_compat_is_compared_with_django_sequences():
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_sequences_compat.py", "--calls", "200", "--repeat", "1"],
        cwd=ROOT,
        # Its own settings (pytest-django exported the suite's), on PostgreSQL.
        env={k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "django-sequences on postgresql" in done.stdout, done.stdout
    rows = re.findall(r"compat\s+([\d,]+)/s\s+django-sequences\s+([\d,]+)/s", done.stdout)
    assert len(rows) == 5, done.stdout
    assert all(int(a.replace(",", "")) > 0 and int(b.replace(",", "")) > 0 for a, b in rows)


@pytest.mark.slow
@pytest.mark.django_db  # needs the PostgreSQL server (skipped where it is missing)
def test_database_ids_are_compared_with_identity_and_the_floor():
    from django.conf import settings

    if not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        pytest.skip("measures PostgreSQL (SNOWID_TEST_DB=postgresql)")
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_database_ids.py", "--rows", "20000", "--rounds", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = re.findall(r"^  (snowid default|identity|floor)\s+([\d.]+)\s", done.stdout, re.M)
    assert len(rows) == 6 and all(float(seconds) > 0 for _, seconds in rows), done.stdout


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
