"""The benchmark scripts keep running against the code they measure: one whose calls no
longer match a script's arguments fails here, not in a user's hands."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.support import ROOT, scratch_database_name

# One benchmark at a time: each measures, and some make databases of their own.
pytestmark = pytest.mark.xdist_group("benchmarks")


def figures_found(script: str, out: str) -> dict[str, str]:
    """Every figure docs/performance.rst reads from ``script``'s output, read from ``out``
    (a pattern that no longer matches the output raises)."""
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from snowid_figures import FIGURES
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))
    return {name: f.read(out) for name, f in FIGURES.items() if f.script == script}


def run_script(*args: str, env: dict[str, str] | None = None, timeout: int = 120) -> str:
    """What ``python args`` (a script of benchmarks/ and its options) printed; it must exit 0."""
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
@pytest.mark.redis
def test_redis_capacity_measures_every_script():
    out = run_script(
        "benchmarks/bench_redis_capacity.py",
        *("--seconds", "0.2", "--clients", "1", "--processes", "2", "--paced-seconds", "0.3"),
    )
    rates = dict(re.findall(r"^(\S.*?)\s+([\d,]+) calls/s", out, re.MULTILINE))
    assert len(rates) == 5, out
    assert all(int(rate.replace(",", "")) > 0 for rate in rates.values()), rates
    issued = re.search(r"^numbers issued, all processes\s+([\d,]+) numbers/s", out, re.MULTILINE)
    assert issued and int(issued[1].replace(",", "")) > 0, out
    paced = re.findall(r"^([\d,]+)/s\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)", out, re.MULTILINE)
    assert [rate for rate, *_ in paced] == ["10", "1,000", "10,000"], out
    assert len(figures_found("bench_redis_capacity", out)) == 5


@pytest.mark.slow
@pytest.mark.redis
def test_script_runners_are_compared():
    out = run_script("benchmarks/bench_scripts.py", "--calls", "200", "--repeat", "1")
    rows = re.findall(r"^(RedisScript|redis-py Script).*?\s([\d.]+)\s+[\d.]+\s", out, re.M)
    assert len(rows) == 4 and all(float(us) > 0 for _, us in rows), out
    assert len(figures_found("bench_scripts", out)) == 2


@pytest.mark.slow
def test_graphql_scalars_are_compared_with_each_librarys_own():
    out = run_script("benchmarks/bench_graphql.py", "--objects", "500", "--repeat", "1")
    ratios = re.findall(r"^  ratio ours/(\w+) ([\d.]+) ", out, re.M)
    assert [name for name, _ in ratios] == ["BigInt", "ID"], out
    assert all(float(ratio) > 0 for _, ratio in ratios), out


@pytest.mark.slow
def test_audit_benchmark_reads_every_row():
    """On PostgreSQL, in a database of its own: a few rows, each pass printed."""
    out = run_script(
        "benchmarks/bench_audit.py",
        "--rows",
        "3000",
        "--batch-size",
        "500",
        "--traced-rows",
        "1000",
        "--repeat",
        "1",
    )
    rates = re.findall(r"^  (SELECT|keyset|snowid_audit).*?\s([\d,]+)\s+[\d.]+$", out, re.M)
    assert [what for what, _ in rates] == ["SELECT", "keyset", "snowid_audit"], out
    assert all(int(rate.replace(",", "")) > 0 for _, rate in rates), out
    assert "peak RSS after every pass" in out
    assert len(figures_found("bench_audit", out)) == 2


@pytest.mark.slow
def test_compat_is_compared_with_django_sequences():
    # Its own settings (pytest-django exported the suite's), on PostgreSQL.
    out = run_script(
        "benchmarks/bench_sequences_compat.py",
        "--calls",
        "200",
        "--repeat",
        "1",
        env={k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
        timeout=300,
    )
    assert "django-sequences on postgresql" in out, out
    rows = re.findall(r"compat\s+([\d,]+)/s\s+django-sequences\s+([\d,]+)/s", out)
    assert len(rows) == 5, out
    assert all(int(a.replace(",", "")) > 0 and int(b.replace(",", "")) > 0 for a, b in rows)
    assert len(figures_found("bench_sequences_compat", out)) == 1


@pytest.mark.slow
@pytest.mark.django_db  # needs the PostgreSQL server (skipped where it is missing)
def test_database_ids_are_compared_with_identity_and_the_floor():
    from django.conf import settings

    if not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        pytest.skip("measures PostgreSQL (SNOWID_TEST_DB=postgresql)")
    out = run_script(
        "benchmarks/bench_database_ids.py", "--rows", "20000", "--rounds", "1", timeout=300
    )
    rows = re.findall(r"^  (snowid default|identity|floor)\s+([\d.]+)\s", out, re.M)
    assert len(rows) == 6 and all(float(seconds) > 0 for _, seconds in rows), out
    assert len(figures_found("bench_database_ids", out)) == 1


@pytest.mark.slow
@pytest.mark.redis
@pytest.mark.django_db  # needs the PostgreSQL server (skipped where it is missing)
def test_bulk_create_is_compared_with_its_floor():
    """Order numbers' bulk_create() against the same rows without the field and with a
    UNIQUE bigint column set in Python, each round's ratio read."""
    from django.conf import settings

    if not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        pytest.skip("measures PostgreSQL (SNOWID_TEST_DB=postgresql)")
    out = run_script(
        "benchmarks/bench_orders.py",
        *("--seconds", "0.05", "--repeat", "1", "--creates", "100"),
        *("--create-rounds", "2", "--bulk-rounds", "2"),
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "benchmarks.settings"},
    )
    rows = re.findall(r"^bulk_create\(\), (.+?)\s+([\d,]+)\s+[\d.]+x", out, re.M)
    assert [what for what, _ in rows] == [
        "no order number",
        "UNIQUE bigint set in Python",
        "OrderNumberQuerySet (Redis)",
    ], out
    assert all(int(rate.replace(",", "")) > 0 for _, rate in rows), out
    floor = r"bulk_create\(\) of 100 <= 1.05x the UNIQUE column set\s+[\d.]+x \([\d.]+-[\d.]+\)"
    assert re.search(floor, out), out
    floor = r"create\(\) <= 1.05x the UNIQUE column set \(blocks\)\s+[\d.]+x \([\d.]+-[\d.]+\)"
    assert re.search(floor, out), out
    plain = r"create\(\) time <= 1.05x without the field \(blocks\)\s+[\d.]+x \([\d.]+-[\d.]+\)"
    assert re.search(plain, out), out
    assert re.search(r"waits of the numbered inserts for the next second: \d+, [\d.]+ s", out)
    assert {"orders.bulk_unique", "orders.bulk_over_unique", "orders.create_over_unique"} <= set(
        figures_found("bench_orders", out)
    )


@pytest.mark.slow
@pytest.mark.redis
def test_metrics_on_and_off_are_compared():
    out = run_script(
        "benchmarks/bench_metrics.py",
        "--calls",
        "200",
        "--repeat",
        "1",
        "--request-rounds",
        "3",
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "benchmarks.settings"},
        timeout=300,
    )
    ratios = re.findall(r"ratio ([\d.]+) ", out)
    assert len(ratios) == 4 and all(float(r) > 0 for r in ratios), out  # the 4th: multiprocess
    assert re.search(r"flush alone\s+[\d.]+ µs a request", out), out
    assert len(figures_found("bench_metrics", out)) == 1


@pytest.mark.slow
@pytest.mark.django_db  # needs the PostgreSQL server (skipped where it is missing)
def test_adoption_is_compared_with_the_plain_alter_field():
    """A few rows, switched online and by the plain migration under the writer: every
    invariant holds (the script exits 1 otherwise) and both columns are printed.

    Slow: the benchmark's two switches, each under a writer process."""
    from django.conf import settings

    if not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        pytest.skip("measures PostgreSQL (SNOWID_TEST_DB=postgresql)")
    name = scratch_database_name("adopt_bench")
    out = run_script(
        "benchmarks/bench_adopt.py",
        "--rows",
        "2000",
        "--settle",
        "0.5",
        "--db-name",
        name,
        env={k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
        timeout=300,
    )
    waits = re.search(r"longest writer statement.*?\s([\d.]+)\s+([\d.]+)\s+[\d.]+$", out, re.M)
    assert waits and all(float(s) > 0 for s in waits.groups()), out
    assert re.search(r"rows lost\s+0\s+0$", out, re.M), out
    assert re.search(r"every old \(pk, fk\) pair unchanged\s+yes\s+yes$", out, re.M), out


@pytest.mark.slow
@pytest.mark.redis
@pytest.mark.django_db  # needs the PostgreSQL server (skipped where it is missing)
def test_concealed_numbers_are_compared_with_plain_ones():
    from django.conf import settings

    if not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        pytest.skip("measures PostgreSQL (SNOWID_TEST_DB=postgresql)")
    name = scratch_database_name("conceal_bench")
    out = run_script(
        "benchmarks/bench_conceal.py",
        "--creates",
        "200",
        "--repeat",
        "1",
        "--numbers",
        "2000",
        "--seconds",
        "20",
        env={
            **{k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
            "SNOWID_BENCH_DB_NAME": name,
        },
    )
    ratios = re.findall(r"^create\(\).*?\s([\d.]+)x$", out, re.M)
    assert len(ratios) == 2 and all(float(r) > 0 for r in ratios), out
    assert len(re.findall(r"^(binary|decimal): .*\s[\d.]+$", out, re.M)) == 6, out
    assert len(re.findall(r"^(binary|decimal), .*\s[\d.]+\s+[\d.]+$", out, re.M)) == 4, out
    assert "target round tables <= 2 MiB per format and process: met" in out, out


@pytest.mark.slow
def test_deep_pages_are_compared_with_drf_s_paginators():
    """On a PostgreSQL server of its own: a few rows, each paginator's page 1 and deep
    page, and the settled-id query with connections open."""
    out = run_script(
        "benchmarks/bench_pages.py",
        *("--rows", "5000", "--depth", "4000", "--repeat", "1", "--connections", "10"),
        timeout=300,
    )
    rows = re.findall(r"^(ours|DRF \w+).*?\s([\d.]+)\s+([\d.]+)\s+[\d.]+x$", out, re.M)
    assert len(rows) == 4 and all(float(a) > 0 and float(b) > 0 for _, a, b in rows), out
    assert re.search(r"settled-id query, 10 other connections open: [\d.]+ ms", out), out


@pytest.mark.slow
@pytest.mark.django_db  # needs the PostgreSQL server (skipped where it is missing)
def test_polling_under_load_is_compared_with_drf_and_the_naive_poll():
    from django.conf import settings

    if not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        pytest.skip("measures PostgreSQL (SNOWID_TEST_DB=postgresql)")
    name = scratch_database_name("feed_bench")
    out = run_script(
        "benchmarks/bench_feed_load.py",
        *("--writers", "2", "--seconds", "1.5", "--longest-transaction", "0.3"),
        env={
            **{k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
            "SNOWID_TEST_DB_NAME": name,
        },
        timeout=300,
    )
    rows = re.findall(r"^(ours|DRF|naive).*?\s([\d,]+)\s+([\d,]+)\s+([\d,]+)$", out, re.M)
    assert [what for what, *_ in rows] == ["ours", "DRF", "naive"], out
    assert rows[0][2:] == ("0", "0"), out  # ours: none missed, none twice


@pytest.mark.slow
def test_time_travel_is_compared_with_the_generator_before_it():
    out = run_script("benchmarks/bench_time_travel.py", "--calls", "40000", "--repeat", "1")
    assert "outside tests SnowflakeGenerator, in a test process TimeTravelGenerator" in out
    rows = re.findall(
        r"^(before|django_snowid|test process).*?\s([\d,]+)\s.*?([\d.]+)x$", out, re.M
    )
    assert len(rows) == 6 and all(int(rate.replace(",", "")) > 0 for _, rate, _ in rows), out
    assert re.search(r"^\[(PASS|MISS)\] next_id\(\) outside tests", out, re.M), out


def test_make_bench_records_every_script_then_rewrites_the_figures():
    makefile = (ROOT / "Makefile").read_text()
    target = makefile.split("\nbench: ", 1)[1].split("\n\n", 1)[0]
    recorded = re.findall(r"^\t\$\(RECORD\) benchmarks/(bench_\w+\.py)$", target, re.MULTILINE)
    scripts = sorted(path.name for path in (ROOT / "benchmarks").glob("bench_*.py"))
    assert sorted(recorded) == scripts
    assert target.rstrip().endswith("$(BIN)/python docs/_ext/snowid_generated.py")


def test_a_recorded_run_keeps_the_output_under_a_line_naming_the_run(tmp_path):
    script = tmp_path / "bench_example.py"
    script.write_text("print('what  figure')\nprint('one   1.5x')\n")
    env = {**os.environ, "SNOWID_BENCH_RESULTS": str(tmp_path / "results")}
    out = run_script("-m", "benchmarks.record", str(script), "--fast", env=env)
    assert out == "what  figure\none   1.5x\n"
    first, *rest = (tmp_path / "results" / "bench_example.txt").read_text().splitlines()
    assert re.fullmatch(
        r"# bench_example\.py --fast: run of \d{4}-\d\d-\d\d \d\d:\d\d UTC, commit \w+.*, "
        r"CPython [\d.]+, Django [\d.]+\w*, \d+ CPUs, load average [\d.]+ before, [\d.]+ after",
        first,
    ), first
    assert rest == ["what  figure", "one   1.5x"]
