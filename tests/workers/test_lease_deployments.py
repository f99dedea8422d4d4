"""Worker ids in deployments as operators run them: several hosts on the default settings,
requests that roll back, and users' own test suites on the defaults."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection, transaction

import django_snowid
from django_snowid.ids import issuer as ids
from django_snowid.models import WorkerLease
from tests.support import ROOT, Children, scratch_database_name
from tests.testapp.models import Product
from tests.workers.deployments import deployed_process, eight_processes

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def default_source(settings):
    """The settings a user gets by default: no SNOWID_WORKER_ID_SOURCE, no worker id."""
    del settings.SNOWID_WORKER_ID_SOURCE
    del settings.SNOWID_WORKER_ID
    ids.reset()
    yield
    ids.reset()


def _host_process(host_dir: str, barrier, results) -> None:
    # A host of its own: its own temporary directory (lock files, PrivateTmp) and name.
    os.environ["TMPDIR"] = host_dir
    tempfile.tempdir = None
    django_snowid.next_id()  # every process holds its worker id before any issues more
    barrier.wait(30)
    results.put(django_snowid.next_ids(25_000))


@pytest.mark.slow
def test_two_hosts_of_four_processes_on_default_settings_never_repeat_an_id(
    default_source, tmp_path
):
    hosts = [tmp_path / "host-a", tmp_path / "host-b"]
    for host in hosts:
        host.mkdir()
    everything = eight_processes(_host_process, [str(hosts[i % 2]) for i in range(8)])
    assert len(everything) == 200_000
    assert len(set(everything)) == len(everything), "ids repeated across hosts"
    assert len({django_snowid.decode(i).node for i in everything}) == 8


@pytest.mark.slow
def test_rolling_deploy_that_changes_the_layout_repeats_no_id(default_source):
    # Old processes on "classic" (the whole node leased), new ones on "datacenter" with
    # datacenter 0: the same node values, read as different leases before.
    old = {"SNOWID_LAYOUT": "classic"}
    new = {"SNOWID_LAYOUT": "datacenter", "SNOWID_WORKER_ID": {"datacenter": 0}}
    everything = eight_processes(deployed_process, [old if i % 2 else new for i in range(8)])
    assert len(set(everything)) == len(everything) == 200_000, "ids repeated across layouts"


class Rollback(Exception):
    pass


def _node_in_child(queue) -> None:
    queue.put(django_snowid.decode(django_snowid.next_id()).node)


@pytest.mark.slow
def test_a_request_that_rolls_back_after_its_first_id_keeps_its_lease(settings):
    if connection.vendor == "sqlite":
        pytest.skip("SQLite keeps its leases beside its file: see the next test")
    settings.SNOWID_WORKER_ID_SOURCE = "database"
    settings.SNOWID_WORKER_LEASE_TTL_S = 1.5
    ids.reset()
    with pytest.raises(Rollback), transaction.atomic():
        product = Product.objects.create(name="first of this process")  # takes the lease
        raise Rollback
    node = django_snowid.decode(product.pk).node
    lease = WorkerLease.objects.get(worker=node)  # not rolled back with the request
    first_expiry = lease.expires_ms
    deadline = time.monotonic() + 10
    while lease.expires_ms == first_expiry and time.monotonic() < deadline:
        time.sleep(0.1)
        lease.refresh_from_db()
    assert lease.expires_ms > first_expiry, "the heartbeat renews the lease"
    with Children() as children:
        children.start(_node_in_child, children.queue)
        assert children.results() != [node]
    assert django_snowid.decode(django_snowid.next_id()).node == node
    ids.reset()


def _first_id_inside_a_write_transaction(queue, barrier) -> None:
    try:
        with transaction.atomic():
            # This connection now holds SQLite's write lock, as a request's atomic()
            # does once it has written anything; then it needs its first id.
            WorkerLease.objects.create(
                pool="unrelated",
                worker=os.getpid(),
                owner="t",
                token=str(os.getpid()),
                acquired_ms=0,
                expires_ms=0,
            )
            queue.put(django_snowid.decode(django_snowid.next_id()).node)
            raise Rollback
    except Rollback:
        barrier.wait(120)  # both processes live while the other takes its worker id
    except Exception as exc:
        queue.put(repr(exc))


@pytest.mark.slow
def test_sqlite_first_ids_inside_write_transactions_lease_distinct_worker_ids(default_source):
    # SQLite takes one writer at a time: a lease written on a connection of its own would
    # wait for the lock this process's own transaction holds. Its leases live beside the
    # database file instead, shared by every process that opens that file.
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's single writer")
    with Children() as children:
        barrier = children.context.Barrier(2)
        for _ in range(2):
            children.start(_first_id_inside_a_write_transaction, children.queue, barrier)
        nodes = children.results(timeout=120)
    assert all(isinstance(n, int) for n in nodes), nodes
    assert len(set(nodes)) == 2, "two live processes got the same worker id"


# ----------------------------------------------------------- users' test suites
PROJECT_SETTINGS = """
import os
SECRET_KEY = "throwaway"
USE_TZ = True
INSTALLED_APPS = ["django.contrib.contenttypes", "django_snowid", "shopapp"]
DEFAULT_AUTO_FIELD = "django_snowid.fields.SnowflakeAutoField"
if os.environ.get("SHOP_PG_NAME"):
    DATABASES = {"default": {
        "ENGINE": "django.db.backends.postgresql", "HOST": os.environ["SHOP_PG_HOST"],
        "PORT": os.environ["SHOP_PG_PORT"], "USER": os.environ["SHOP_PG_USER"],
        "PASSWORD": os.environ["SHOP_PG_PASSWORD"], "NAME": os.environ["SHOP_PG_NAME"],
    }}
else:
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": "shop.sqlite3"}}
# No SNOWID_* setting at all: the defaults.
"""

PROJECT_MODELS = """
from django.db import models


class Order(models.Model):
    name = models.CharField(max_length=20)
"""

PROJECT_TESTS = """
import threading

import django_snowid

from django.test import TestCase, TransactionTestCase

from shopapp.models import Order


class InATransaction(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.first = Order.objects.create(name="setup")

    def test_saves(self):
        Order.objects.create(name="a")
        Order.objects.create(name="b")
        self.assertEqual(Order.objects.count(), 3)

    def test_threads_save_too(self):
        ids = []
        thread = threading.Thread(target=lambda: ids.append(django_snowid.next_id()))
        thread.start()
        thread.join()
        self.assertGreater(Order.objects.create(name="c").pk, self.first.pk)


class Committed(TransactionTestCase):
    def test_saves(self):
        Order.objects.create(name="a")
        self.assertEqual(Order.objects.count(), 1)
"""


def _write_project(root: Path) -> None:
    (root / "shopapp" / "migrations").mkdir(parents=True)
    (root / "shop_settings.py").write_text(PROJECT_SETTINGS)
    (root / "shopapp" / "__init__.py").write_text("")
    (root / "shopapp" / "migrations" / "__init__.py").write_text("")
    (root / "shopapp" / "models.py").write_text(PROJECT_MODELS)
    (root / "shopapp" / "tests.py").write_text(PROJECT_TESTS)
    (root / "manage.py").write_text(
        textwrap.dedent(
            """
            import os, sys
            from django.core.management import execute_from_command_line
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shop_settings")
            execute_from_command_line(sys.argv)
            """
        )
    )
    (root / "pytest.ini").write_text(
        "[pytest]\nDJANGO_SETTINGS_MODULE = shop_settings\npython_files = tests.py\n"
    )


def _run(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    options: dict[str, Any] = {"cwd": root, "env": env, "capture_output": True, "text": True}
    return subprocess.run([sys.executable, *args], timeout=120, **options)


@pytest.mark.slow
@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_a_users_test_suites_pass_on_the_defaults(database, tmp_path):
    if database == "postgresql" and connection.vendor != "postgresql":
        pytest.skip("runs with SNOWID_TEST_DB=postgresql")
    _write_project(tmp_path)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
        "DJANGO_SETTINGS_MODULE": "shop_settings",
    }
    if database == "postgresql":
        db = django_settings.DATABASES["default"]
        env.update(
            SHOP_PG_HOST=db["HOST"],
            SHOP_PG_PORT=str(db["PORT"]),
            SHOP_PG_USER=db["USER"],
            SHOP_PG_PASSWORD=db["PASSWORD"],
            SHOP_PG_NAME=scratch_database_name("shop"),
        )
    made = _run(tmp_path, env, "manage.py", "makemigrations", "shopapp", "-v", "0")
    assert made.returncode == 0, made.stderr
    runner = _run(tmp_path, env, "manage.py", "test", "--noinput", "-v", "2")
    assert runner.returncode == 0, runner.stderr
    assert "Ran 3 tests" in runner.stderr and "OK" in runner.stderr
    plugin = _run(tmp_path, env, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--create-db")
    assert plugin.returncode == 0, plugin.stdout + plugin.stderr
    assert "3 passed" in plugin.stdout
