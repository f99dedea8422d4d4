"""Our tables missing from the database, as in a rolling deploy (the new code starts before
``migrate`` has run) or after a table was dropped: nothing is issued from a store that
is not there, the checks and the health checks say so, and ``migrate`` still works."""

from __future__ import annotations

import time

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

import django_snowid
from django_snowid.exceptions import OrderNumberUnavailable, SequenceUnavailable, WorkerIdError
from django_snowid.health import probes
from django_snowid.ids import issuer
from django_snowid.models import OrderStreamState, WorkerLease
from django_snowid.sequences import next_value
from django_snowid.sequences.models import SequenceMark
from django_snowid.workers.lease import release_all
from tests.support import Children
from tests.testapp.models import ShopOrder

pytestmark = pytest.mark.django_db(transaction=True)

IDS_A_PROCESS = 20_000


def _drop(*models: type) -> None:
    with connection.schema_editor() as editor:
        for model in models:
            editor.delete_model(model)


def _tables_of_the_app() -> list[type]:
    return [m for m in apps.get_app_config("django_snowid").get_models() if m._meta.managed]


@pytest.fixture
def lease_source(settings):
    settings.SNOWID_WORKER_ID_SOURCE = "database"
    settings.SNOWID_WORKER_LEASE_TTL_S = 1.5
    issuer.reset()
    yield
    issuer.reset()
    release_all()


@pytest.fixture(params=["app added", "table dropped"])
def missing(request, transactional_db, lease_source):
    """The lease table missing: the app added to a project and not migrated yet (its
    tables gone, its migrations not recorded), or the lease table dropped after its
    migration ran. Migrated again afterwards, whatever the test did."""
    if request.param == "app added":
        _drop(*_tables_of_the_app())
        MigrationRecorder(connection).migration_qs.filter(app="django_snowid").delete()
    else:
        _drop(WorkerLease)
    yield request.param
    issuer.reset()
    release_all()
    call_command("migrate", verbosity=0)
    for model in _tables_of_the_app():
        if model._meta.db_table not in connection.introspection.table_names():
            with connection.schema_editor() as editor:
                editor.create_model(model)


def _issue_once_migrated(tried, barrier, results) -> None:
    refusals: list[str] = []
    while True:
        try:
            django_snowid.next_id()
            break
        except WorkerIdError as exc:
            refusals.append(str(exc))
            if len(refusals) == 1:
                tried.release()
            time.sleep(0.05)
    if not refusals:
        tried.release()
    barrier.wait(60)  # both hold a worker id: they issue at the same time
    results.put((refusals[:1], django_snowid.next_ids(IDS_A_PROCESS)))


@pytest.mark.slow
def test_processes_started_before_migrate_issue_nothing_until_it_ran(missing):
    with Children() as children:
        tried = children.context.Semaphore(0)
        barrier = children.context.Barrier(2)
        for _ in range(2):
            children.start(_issue_once_migrated, tried, barrier, children.queue)
        for _ in range(2):
            assert tried.acquire(timeout=60), "a process never tried"
        call_command("migrate", verbosity=0)  # after both processes asked for ids
        replies = children.results(timeout=120)

    everything = [i for _, issued in replies for i in issued]
    assert len(everything) == 2 * IDS_A_PROCESS
    assert len(set(everything)) == len(everything), "two processes issued the same ids"
    if connection.vendor != "sqlite":  # SQLite keeps its leases beside its file
        for refusals, _ in replies:
            assert refusals, "a process issued ids without a lease in the table"
            assert "manage.py migrate" in refusals[0]
            assert WorkerLease._meta.db_table in refusals[0]


def test_check_database_fails_until_migrate_creates_the_lease_table(missing):
    if connection.vendor == "sqlite":
        pytest.skip("SQLite keeps its leases beside its file, not in the table")
    with pytest.raises(SystemCheckError, match=r"django_snowid\.E017"):
        call_command("check", "--database", "default")
    findings = probes.worker_leases()
    assert [f.fatal for f in findings] == [True]
    assert "manage.py migrate" in findings[0].message
    assert "Bring it back" not in findings[0].message

    call_command("migrate", verbosity=0)  # runs the database checks itself first

    call_command("check", "--database", "default")
    assert probes.worker_leases() == []
    assert django_snowid.next_id() > 0


# ------------------------------------------- the order store's and the sequences' tables
@pytest.fixture
def dropped(transactional_db):
    """Drop the given models' tables; put them back afterwards."""
    gone: list[type] = []

    def drop(model: type) -> None:
        _drop(model)
        gone.append(model)

    yield drop
    with connection.schema_editor() as editor:
        for model in gone:
            editor.create_model(model)


def test_order_numbers_refuse_without_their_table(settings, dropped):
    settings.SNOWID_ORDER_BACKEND = "database"
    dropped(OrderStreamState)
    with pytest.raises(SystemCheckError, match=r"django_snowid\.E220"):
        call_command("check", "--database", "default")
    with pytest.raises(OrderNumberUnavailable, match=r"manage\.py migrate"):
        ShopOrder.objects.create(user_id=1)
    (finding,) = probes.order_store_reachable()
    assert finding.fatal and OrderStreamState._meta.db_table in finding.message


@pytest.mark.redis
def test_sequences_refuse_without_their_table(settings, dropped):
    dropped(SequenceMark)
    with pytest.raises(SystemCheckError, match=r"django_snowid\.E320"):
        call_command("check", "--database", "default")
    for backend in ("database", "redis"):
        settings.SNOWID_SEQUENCE_BACKEND = backend
        with pytest.raises(SequenceUnavailable, match=r"manage\.py migrate"):
            next_value("invoices")
    (finding,) = probes.sequence_store_reachable()
    assert finding.fatal and "manage.py migrate" in finding.message


def test_a_missing_cache_alias_is_our_error_naming_it(settings):
    from django_snowid.exceptions import RedisClientError
    from django_snowid.stores.redis_client import get_client

    settings.SNOWID_REDIS_ALIAS = "gone"
    with pytest.raises(RedisClientError, match="CACHES has no alias 'gone'"):
        get_client()
