"""Test-suite plumbing: which database this run uses, and what to do when it is missing.

Under ``CI=true`` a missing service fails the run; elsewhere the tests that need it are
skipped, and the summary says so loudly.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest
from django.conf import settings

from tests.browser import browser, page  # noqa: F401  (the browser tests' fixtures)
from tests.support import LEASE_TTL_S, FakeClock, ThrowawayRedis

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}

_unavailable: str | None = None
_redis_unavailable: str | None = None
_browser_unavailable: str | None = None


def chromium_path() -> str:
    import shutil

    return os.environ.get("SNOWID_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def _probe_browser() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    if not os.path.exists(chromium_path()):
        return f"no Chromium at {chromium_path()} (Debian: apt-get install chromium)"
    return None


def _probe_database() -> str | None:
    db = settings.DATABASES["default"]
    engine = db["ENGINE"].rsplit(".", 1)[-1]
    try:
        if engine == "postgresql":
            import psycopg

            psycopg.connect(
                host=db["HOST"],
                port=db["PORT"],
                user=db["USER"],
                password=db["PASSWORD"],
                dbname="postgres",
                connect_timeout=5,
            ).close()
        elif engine == "mysql":
            import MySQLdb

            MySQLdb.connect(
                host=db["HOST"],
                port=int(db["PORT"]),
                user=db["USER"],
                password=db["PASSWORD"],
                connect_timeout=5,
            ).close()
    except Exception as exc:  # any failure means: this service cannot be tested here
        return f"{engine} at {db.get('HOST')}:{db.get('PORT')} is not usable: {exc!r}"
    return None


def _probe_redis() -> str | None:
    import shutil

    import redis

    if shutil.which("redis-server") is None:
        return "redis-server is not installed (the restart tests start their own)"
    url = settings.REDIS_URL
    try:
        redis.Redis.from_url(url, socket_connect_timeout=3).ping()
    except Exception as exc:
        return f"Redis at {url} is not usable: {exc!r}"
    return None


def pytest_report_header(config: pytest.Config) -> str:
    return f"django-snowid: database backend {settings.DATABASES['default']['ENGINE']}"


def pytest_sessionstart(session: pytest.Session) -> None:
    global _unavailable, _redis_unavailable, _browser_unavailable
    _unavailable = _probe_database()
    _redis_unavailable = _probe_redis()
    _browser_unavailable = _probe_browser()
    for missing in (_unavailable, _redis_unavailable, _browser_unavailable):
        if missing and IN_CI:
            pytest.exit(f"CI=true and {missing}", returncode=3)


# A test that takes longer than this says why in its docstring ("Slow: ..."); the summary
# names those that do not.
SLOW_TEST_S = 20.0
_durations: dict[str, float] = {}
_says_why: dict[str, bool] = {}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        doc = getattr(getattr(item, "obj", None), "__doc__", None) or ""
        item.user_properties.append(("says_why_slow", "Slow:" in doc))
        if item.get_closest_marker("browser"):
            # One Chromium per module (tests/browser.py): the module's tests on one worker.
            item.add_marker(pytest.mark.xdist_group(f"browser-{item.path.stem}"))
    for missing, marker in (
        (_unavailable, "django_db"),
        (_redis_unavailable, "redis"),
        (_browser_unavailable, "browser"),
    ):
        if not missing:
            continue
        skip = pytest.mark.skip(reason=f"SKIPPED, SERVICE MISSING: {missing}")
        for item in items:
            if item.get_closest_marker(marker):
                item.add_marker(skip)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + report.duration
    _says_why[report.nodeid] = dict(report.user_properties).get("says_why_slow", True)


def _slow_without_reason(terminalreporter: pytest.TerminalReporter) -> None:
    unexplained = sorted(
        (seconds, nodeid)
        for nodeid, seconds in _durations.items()
        if seconds > SLOW_TEST_S and not _says_why.get(nodeid, True)
    )
    if not unexplained:
        return
    terminalreporter.section(f"over {SLOW_TEST_S:.0f} s with no 'Slow:' in the docstring")
    for seconds, nodeid in reversed(unexplained):
        terminalreporter.write_line(f"{seconds:7.1f} s  {nodeid}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    _slow_without_reason(terminalreporter)
    for missing, what in (
        (_unavailable, "database"),
        (_redis_unavailable, "Redis"),
        (_browser_unavailable, "browser"),
    ):
        if missing:
            terminalreporter.section("SERVICE MISSING", sep="!", red=True, bold=True)
            terminalreporter.write_line(f"{missing}: its {what} tests were SKIPPED.")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


_test_counter = iter(range(1, 10**9))


@pytest.fixture(autouse=True)
def _own_redis_keys(settings):
    """Every test gets key names of its own on the shared Redis, and deletes them after."""
    prefix = f"{settings.SNOWID_REDIS_KEY_PREFIX}-{next(_test_counter)}"
    settings.SNOWID_REDIS_KEY_PREFIX = prefix
    yield
    if _redis_unavailable:
        return
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=3)
    keys = list(client.scan_iter(match=f"{{{prefix}:*", count=1000))
    if keys:
        client.delete(*keys)


@pytest.fixture(autouse=True)
def _close_own_connections():
    """The connections our code keeps outside the test's transaction (those of sequence
    marks) close after each test: the test database is dropped at the end of the run."""
    yield
    from django_snowid.db.connections import close_own_connections

    close_own_connections()


@contextlib.contextmanager
def _serving(workdir: str) -> Iterator[ThrowawayRedis]:
    server = ThrowawayRedis(workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def throwaway_redis(tmp_path):
    """A redis-server of the test's own, on a free port; never the shared one."""
    with _serving(str(tmp_path)) as server:
        yield server


@pytest.fixture
def second_redis(tmp_path):
    """Another throwaway redis-server: a second server, or a replica."""
    (tmp_path / "second").mkdir()
    with _serving(str(tmp_path / "second")) as server:
        yield server


@pytest.fixture
def source(request, tmp_path):
    """The worker-id source ``request.param`` (parametrize it with ``indirect=True``), with
    leases of ``LEASE_TTL_S``. Redis leases are keyed by nothing a test can vary (not the
    key prefix): each test has a redis-server of its own."""
    from django.test import override_settings

    from django_snowid.ids import issuer
    from django_snowid.workers.lease import release_all

    caches = {}
    with contextlib.ExitStack() as stack:
        if request.param == "redis":
            caches = {"CACHES": stack.enter_context(_serving(str(tmp_path))).caches()}
        with override_settings(
            SNOWID_WORKER_ID_SOURCE=request.param,
            SNOWID_WORKER_SLOT_DIR=str(tmp_path / "slots"),
            SNOWID_WORKER_LEASE_TTL_S=LEASE_TTL_S,
            **caches,
        ):
            yield request.param
            issuer.reset()
            release_all()  # leases taken outside the registry too: none outlives its test


@pytest.fixture(params=[pytest.param("redis", marks=pytest.mark.redis), "database"])
def backend(request):
    """Runs an order-number test once on each store."""
    from django.test import override_settings

    with override_settings(SNOWID_ORDER_BACKEND=request.param):
        yield request.param


@pytest.fixture
def database_orders(settings):
    """Order numbers kept in the database (no Redis needed)."""
    settings.SNOWID_ORDER_BACKEND = "database"


@pytest.fixture(params=[pytest.param("redis", marks=pytest.mark.redis), "database"])
def seq_backend(request, settings):
    """Runs a named-sequence test once on each store."""
    settings.SNOWID_SEQUENCE_BACKEND = request.param
    return request.param


@pytest.fixture
def cluster(tmp_path):
    """A Redis Cluster of the test's own (``tests.redis_topologies.Cluster``)."""
    from tests.redis_topologies import Cluster

    with Cluster(str(tmp_path)) as topology:
        yield topology
