"""The django-health-check checks pass and fail against real servers: a Redis stopped, a
lease fenced, a clock shifted by an injected clock."""

from __future__ import annotations

import io
import json
import threading
import time
from datetime import datetime, timezone

import pytest
from asgiref.sync import async_to_sync
from django.test import RequestFactory, override_settings
from health_check.exceptions import ServiceUnavailable, ServiceWarning
from health_check.views import HealthCheckView

import django_snowid
from django_snowid.health import (
    ClockNotBehind,
    OrderNumberStore,
    Redis,
    SequenceStore,
    TimeBits,
    WorkerLease,
    checks_in_use,
)
from django_snowid.ids import issuer as id_issuer
from django_snowid.settings_layouts import get_layout
from django_snowid.workers.leased import lease_of
from tests.support import Clock
from tests.testapp.models import Product

SECOND_NS = 10**9


# ---------------------------------------------------------------- leases


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("source", ["redis"], indirect=True)
def test_worker_lease_passes_while_held_and_fails_once_fenced(source):
    from django_snowid.health.probes import worker_leases

    def failing() -> list[str]:
        # A heartbeat (every 0.5 s here) late on a busy machine is a warning, not a failure.
        return [f.message for f in worker_leases() if f.fatal]

    WorkerLease().run()  # no lease yet: the store answers
    django_snowid.next_id()
    lease = lease_of(id_issuer.get_generator())
    assert failing() == []
    # Fenced: another holder's token in the record; the next renewal finds it.
    client, key = lease.store.client(), lease.store.key(lease.pool.name)
    owner, _token, rest = client.hget(key, str(lease.worker)).decode().split("|", 2)
    client.hset(key, str(lease.worker), f"{owner}|another|{rest}")
    with pytest.raises(Exception, match="no longer ours"):
        lease.record_ahead()
    with pytest.raises(ServiceUnavailable, match=f"worker id {lease.worker} of pool"):
        WorkerLease().run()
    django_snowid.next_id()  # a new lease replaces the lost one
    assert failing() == []


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_worker_lease_says_what_a_waiting_process_awaits_and_until_when(throwaway_redis):
    """A lease store that lost its records (here: never had any) hands out no worker id
    for a while; the check of a process waiting for one says for what, and until when."""
    from django_snowid.health.probes import worker_leases
    from django_snowid.workers.pool import pool_name
    from django_snowid.workers.stores.base import horizon_text

    with override_settings(
        CACHES=throwaway_redis.caches(),
        SNOWID_WORKER_ID_SOURCE="redis",
        SNOWID_WORKER_LEASE_TTL_S=1.5,
    ):
        id_issuer.reset()
        waiting = threading.Thread(target=django_snowid.next_id)
        waiting.start()
        found = []
        while waiting.is_alive() and not found:
            found = [f for f in worker_leases() if "waits until" in f.message]
            time.sleep(0.01)
        waiting.join()
        assert found, "the wait was never reported"
        pool = pool_name(get_layout())
        # Until the last of the pools of the settings' layouts, whose waits started together.
        client = throwaway_redis.client()
        since = max(int(client.hget(key, "since")) for key in client.scan_iter("{snowid:workers:*"))
        (finding,) = found
        assert finding.fatal
        assert f"waits until {horizon_text(since + 2000)}" in finding.message
        assert f"pool {pool!r}" in finding.message
        assert [f for f in worker_leases() if "waits until" in f.message] == []
        id_issuer.reset()


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_worker_lease_fails_when_the_lease_store_is_down(throwaway_redis):
    with override_settings(
        CACHES=throwaway_redis.caches(),
        SNOWID_WORKER_ID_SOURCE="redis",
        SNOWID_WORKER_LEASE_TTL_S=1.5,
    ):
        django_snowid.next_id()
        lease = lease_of(id_issuer.get_generator())
        WorkerLease().run()
        throwaway_redis.stop()
        with pytest.raises(
            ServiceUnavailable, match="'redis' worker-id lease store is unreachable"
        ):
            WorkerLease().run()
        # A heartbeat overdue, then the lease past its trust (monotonic time, injected).
        from django_snowid.health.probes import worker_leases

        late = worker_leases(now=lease.renewed_at + 1.6 * lease.interval_s)
        assert any(not f.fatal and "renewals are failing" in f.message for f in late)
        expired = worker_leases(now=lease.renewed_at + 1.5)
        assert any(f.fatal and "past the time it can be trusted" in f.message for f in expired)
        throwaway_redis.start()
        id_issuer.reset()


# ----------------------------------------------------------------- Redis


@pytest.mark.redis
def test_redis_check_names_the_alias_and_its_users(throwaway_redis):
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis"):
        Redis().run()
        throwaway_redis.stop()
        with pytest.raises(
            ServiceUnavailable,
            match=r"Redis \(cache alias 'snowid'\) is unreachable.*order numbers",
        ):
            Redis().run()
        throwaway_redis.start()


def test_a_failing_check_is_logged_by_django_health_check_3_without_a_traceback(caplog, settings):
    """3.24 logs an error raised by a check with its traceback (``logger.exception``) and
    one handed to ``add_error`` in a line: ours are handed over. 4.x logs every failure
    with its traceback whatever the check does (docs/operations.rst says how to quiet it)."""
    from importlib.metadata import version

    from tests.support import free_port, redis_caches

    if int(version("django-health-check").split(".")[0]) >= 4:
        pytest.skip("django-health-check 4 logs every failed check with its traceback")
    settings.CACHES = redis_caches(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens
    settings.SNOWID_ORDER_BACKEND = "redis"
    check = Redis()
    check.run_check()
    (error,) = check.errors
    assert isinstance(error, ServiceUnavailable) and "unreachable" in str(error)
    logged = [r for r in caplog.records if r.name == "health-check"]
    assert logged and not any(r.exc_info for r in logged)


def test_redis_users_are_the_families_whose_stores_need_redis(monkeypatch):
    """A store of any name whose ``needs`` say Redis makes its family a Redis user."""
    from django_snowid.health.probes import redis_users
    from django_snowid.workers.stores import LEASES

    monkeypatch.setitem(
        LEASES.choices, "pooled", "django_snowid.workers.stores.redis.RedisLeaseStore.configured"
    )
    with override_settings(
        SNOWID_WORKER_ID_SOURCE="pooled",
        SNOWID_ORDER_BACKEND="database",
        SNOWID_SEQUENCE_BACKEND="redis",
    ):
        assert redis_users() == ["worker-id leases", "named sequences"]
    with override_settings(SNOWID_WORKER_ID_SOURCE="static", SNOWID_ORDER_BACKEND="redis"):
        assert redis_users() == ["order numbers"]


# ----------------------------------------------------------------- clock


@pytest.mark.django_db
def test_clock_not_behind_the_newest_id(settings):
    product = Product.objects.create(name="x")
    issued_ns = int(get_layout().decode(product.pk).time.timestamp() * SECOND_NS)
    ClockNotBehind(clock=lambda: issued_ns).run()
    ClockNotBehind(clock=lambda: issued_ns - SECOND_NS // 2).run()  # within what waits
    with pytest.raises(ServiceWarning, match="1500 ms behind the newest id of layout 'default'"):
        ClockNotBehind(clock=lambda: issued_ns - 1500 * 10**6).run()
    with pytest.raises(ServiceUnavailable, match="NTP"):
        ClockNotBehind(clock=lambda: issued_ns - 60 * SECOND_NS).run()


@pytest.mark.django_db
def test_clock_check_passes_on_empty_tables():
    ClockNotBehind(clock=lambda: 0).run()


# ------------------------------------------------------------- time bits


def test_time_bits_horizon():
    end = get_layout().exhausted_at.timestamp()  # the classic layout: 2089
    TimeBits(clock=time.time).run()
    with pytest.raises(ServiceWarning, match=r"run out at 2089.*in 364 days"):
        TimeBits(clock=lambda: end - 365 * 86400 + 10).run()
    with override_settings(SNOWID_HEALTH_TIME_BITS_HORIZON=get_layout().exhausted_at - datetime(
        2089, 1, 1, tzinfo=timezone.utc
    )):  # fmt: skip
        TimeBits(clock=lambda: end - 365 * 86400).run()
    with pytest.raises(ServiceUnavailable, match="ran out"):
        TimeBits(clock=lambda: end + 1).run()


# ------------------------------------------------------------------ stores


@pytest.mark.redis
@pytest.mark.django_db
def test_order_number_store_check(throwaway_redis):
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis"):
        OrderNumberStore().run()
        throwaway_redis.stop()
        with pytest.raises(ServiceUnavailable, match=r"SNOWID_ORDER_BACKEND='redis'.*unreachable"):
            OrderNumberStore().run()
        throwaway_redis.start()
    with override_settings(SNOWID_ORDER_BACKEND="database"):
        OrderNumberStore().run()


@pytest.mark.redis
@pytest.mark.django_db
def test_sequence_store_check(throwaway_redis):
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_SEQUENCE_BACKEND="redis"):
        SequenceStore().run()
        throwaway_redis.stop()
        with pytest.raises(ServiceUnavailable, match="SNOWID_SEQUENCE_BACKEND='redis'"):
            SequenceStore().run()
        throwaway_redis.start()
    SequenceStore().run()  # the database store: its marks' table answers


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_sequence_store_check_warns_when_a_mark_lags_its_rate(throwaway_redis):
    from django_snowid.sequences.spec import get_spec
    from django_snowid.sequences.stores import get_store

    # A mark raised 5 values at a time cannot keep 15 minutes ahead of 600 values a second.
    declared = {"tickets": {"min_step": 1, "max_step": 5}, "calm": {}}
    with override_settings(
        CACHES=throwaway_redis.caches(), SNOWID_SEQUENCE_BACKEND="redis", SNOWID_SEQUENCES=declared
    ):
        store = get_store()  # the store the check reads, on the test's clock
        clock = Clock(datetime(2026, 11, 23, 12, 0, 0, tzinfo=timezone.utc))
        store.clock = clock
        store.next_values(get_spec("calm"), 1, None)
        SequenceStore().run()  # one value in this second: the raising's "low", not ours
        for _ in range(6):
            store.next_values(get_spec("tickets"), 100, None)
        clock.now += 1  # the burst is the last full second
        with pytest.raises(ServiceWarning, match=r"mark of 1 sequence\(s\) lags.*'tickets'"):
            SequenceStore().run()


# ------------------------------------------------------- in use, the view


@override_settings(SNOWID_WORKER_ID_SOURCE="static", SNOWID_ORDER_BACKEND="database")
def test_checks_in_use_follow_the_settings():
    assert checks_in_use() == [
        "django_snowid.health.ClockNotBehind",
        "django_snowid.health.TimeBits",
        "django_snowid.health.OrderNumberStore",
        "django_snowid.health.SequenceStore",
    ]
    with override_settings(SNOWID_WORKER_ID_SOURCE="redis"):
        assert checks_in_use()[:2] == [
            "django_snowid.health.WorkerLease",
            "django_snowid.health.Redis",
        ]


def respond(view, request):
    """django-health-check 4.x serves the view async, 3.24 sync."""
    if getattr(HealthCheckView, "view_is_async", False):
        return async_to_sync(view)(request)
    return view(request)


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_the_health_check_view_runs_them(throwaway_redis):
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis"):
        view = HealthCheckView.as_view(checks=checks_in_use())
        request = RequestFactory().get("/ht/", HTTP_ACCEPT="application/json")
        response = respond(view, request)
        assert response.status_code == 200, response.content
        assert set(json.loads(response.content).values()) == {"OK"}
        throwaway_redis.stop()
        response = respond(view, request)
        assert response.status_code == 500
        assert "unreachable" in json.loads(response.content)["Redis()"]
        throwaway_redis.start()


# ------------------------------------------------- the docs' monitoring URLs
@pytest.fixture
def docs_monitoring_urls(tmp_path, settings):
    """The health URL of docs/operations.rst, guarded by the docs' ``monitoring_only``
    (``mysite/monitoring.py``), as the project's URLconf."""
    import sys

    from tests.project.test_docs_examples import DOCS, parse_rst

    blocks = parse_rst(DOCS / "operations.rst").blocks
    (guard,) = [b for b in blocks if b.caption == "mysite/monitoring.py"]
    (urls,) = [b for b in blocks if b.caption == "mysite/urls.py" and "snowid-health" in b.text]
    (tmp_path / "mysite").mkdir()
    (tmp_path / "mysite" / "__init__.py").write_text("")
    (tmp_path / "mysite" / "monitoring.py").write_text(guard.text)
    (tmp_path / "docs_health_urls.py").write_text("urlpatterns = []\n" + urls.text)
    sys.path.insert(0, str(tmp_path))
    settings.ROOT_URLCONF = "docs_health_urls"
    settings.MONITORING_TOKEN = "s3cr3t"
    try:
        yield
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("mysite", "mysite.monitoring", "docs_health_urls"):
            sys.modules.pop(name, None)


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_the_docs_health_url_is_for_staff_and_the_token_only(docs_monitoring_urls, client):
    from django.contrib.auth.models import User

    json_please = {"HTTP_ACCEPT": "application/json"}
    assert client.get("/ht/", **json_please).status_code == 403
    wrong = client.get("/ht/", HTTP_AUTHORIZATION="Bearer guess", **json_please)
    assert wrong.status_code == 403
    probe = client.get("/ht/", HTTP_AUTHORIZATION="Bearer s3cr3t", **json_please)
    assert probe.status_code == 200, probe.content
    assert "TimeBits()" in json.loads(probe.content)
    client.force_login(User.objects.create_user("ops", is_staff=True))
    assert client.get("/ht/", **json_please).status_code == 200


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_django_health_check_4s_command_runs_the_docs_health_url(docs_monitoring_urls):
    from importlib.metadata import version

    from django.core.management import call_command
    from health_check.management.commands.health_check import Command

    if int(version("django-health-check").split(".")[0]) < 4:
        pytest.skip("the command's --no-http is django-health-check 4's (the Django 6 run)")
    out = io.StringIO()
    with pytest.raises(SystemExit) as done:
        call_command(Command(), "snowid-health", "--no-http", stdout=out)
    assert done.value.code == 0, out.getvalue()
    assert "TimeBits" in out.getvalue()
