"""The commands on a broken store or a database that is down: a ``CommandError`` that
names the store and the problem, never a traceback."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from django_snowid.settings_layouts import get_layout
from django_snowid.workers.pool import pool_for
from django_snowid.workers.stores import get_lease_store
from tests.support import free_port, manage_in_subprocess, manage_project, project, redis_caches

pytestmark = pytest.mark.django_db


def run(name: str, *args: str) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out)
    return out.getvalue()


def test_recover_with_an_unknown_database_alias():
    with pytest.raises(CommandError, match="--database 'nope' is not in DATABASES"):
        run("snowid_recover", "--database", "nope")


def test_recover_in_a_subprocess_prints_no_traceback():
    # --skip-checks: on MariaDB, Django 6's system checks connect to every database, and
    # outside the test run the suite's databases do not exist; the command is what counts.
    done = manage_in_subprocess("snowid_recover", "--database", "nope", "--skip-checks")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "--database 'nope'" in done.stderr


@pytest.mark.redis
def test_recover_with_a_stream_key_of_the_wrong_type(throwaway_redis):
    from django_snowid.orders.stores import get_store
    from tests.testapp.models import ShopOrder

    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis"):
        store = get_store()
        stream = ShopOrder._meta.get_field("number").stream
        throwaway_redis.client().set(store.key(stream), "a string, not a hash")
        with pytest.raises(CommandError, match=r"redis order-number store.*WRONGTYPE"):
            run("snowid_recover")


@pytest.mark.redis
def test_workers_with_redis_down_names_the_store(settings):
    settings.CACHES = redis_caches(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens
    settings.SNOWID_WORKER_ID_SOURCE = "redis"
    with pytest.raises(CommandError, match=r"The redis lease store in Redis .* could not be read"):
        run("snowid_workers")


@pytest.mark.redis
def test_workers_with_a_garbage_lease_record(throwaway_redis):
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_WORKER_ID_SOURCE="redis"):
        store = get_lease_store("redis")
        pool = pool_for(get_layout(), 0).name
        throwaway_redis.client().hset(store.key(pool), "0", "garbage")  # type: ignore[attr-defined]
        throwaway_redis.client().sadd(store.POOLS, pool)  # type: ignore[attr-defined]
        with pytest.raises(CommandError, match=r"redis lease store .* could not be read"):
            run("snowid_workers")


def test_workers_lists_the_slot_files_of_this_host(settings, tmp_path):
    import fcntl

    settings.SNOWID_WORKER_ID_SOURCE = "slot"
    settings.SNOWID_WORKER_SLOT_DIR = str(tmp_path)
    assert "No live worker-id slot files" in run("snowid_workers")
    held = tmp_path / "default.3.lock"
    held.write_text("@1795000000000 default\n")
    (tmp_path / "default.4.lock").write_text("")
    with open(held) as fd:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        rows = json.loads(run("snowid_workers", "--json"))
        assert rows == [
            {
                "pool": "default",
                "worker_id": "3",
                "layout": "default",
                "state": "held",
                "issued_until": "2026-11-18T11:06:40.000Z",
            }
        ]
        every = json.loads(run("snowid_workers", "--json", "--all"))
        assert [(r["worker_id"], r["state"]) for r in every] == [("3", "held"), ("4", "free")]


def test_workers_all_lists_the_lock_files_of_the_default_source_on_an_sqlite_file(tmp_path):
    """The ``database`` source on an SQLite file keeps its leases in lock files beside it:
    once their processes ended, ``--all`` lists them free, as for the ``slot`` source."""
    shop = project(tmp_path, apps=["django_snowid"], models="")
    took = manage_project(shop, "shell", "-c", "import django_snowid; django_snowid.next_id()")
    assert took.returncode == 0, took.stderr
    assert list(tmp_path.glob("db.sqlite3-snowid-leases/*.lock"))
    listed = manage_project(shop, "snowid_workers", "--all", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["state"] for r in json.loads(listed.stdout)] == ["free"]


@pytest.mark.parametrize("source", ["database"])
def test_workers_all_lists_released_leases(settings, source):
    from django.db import connection

    from django_snowid.workers.lease import release_all
    from django_snowid.workers.leased import lease_generator

    if source == "database" and connection.vendor == "sqlite":
        pytest.skip("SQLite keeps the database source's leases beside its file")
    settings.SNOWID_WORKER_ID_SOURCE = source

    def of_processes(rows: list[dict[str, object]]) -> list[object]:
        # Not the reservations of database ids (PostgreSQL runs have a model with them).
        return [r["worker_id"] for r in rows if not str(r["owner"]).startswith("database:")]

    node = lease_generator(get_layout("default"), 0, source, heartbeat=False).node
    live = json.loads(run("snowid_workers", "--json"))
    assert of_processes(live) == [node]
    release_all()
    assert of_processes(json.loads(run("snowid_workers", "--json"))) == []
    every = json.loads(run("snowid_workers", "--json", "--all"))
    assert of_processes(every) == [node], "--all shows the released lease"


def test_workers_with_a_fixed_worker_id_says_so(settings):
    settings.SNOWID_WORKER_ID_SOURCE = "static"
    assert "the worker id is fixed" in run("snowid_workers")


def test_workers_json_option_has_help():
    from django.core.management import load_command_class

    parser = load_command_class("django_snowid", "snowid_workers").create_parser(
        "manage.py", "snowid_workers"
    )
    assert "JSON" in parser.format_help()


def test_decode_unknown_layout_names_them_once():
    with pytest.raises(CommandError) as caught:
        run("snowid_decode", "1", "--layout", "nope")
    message = str(caught.value)
    assert message.count("'js'") == 1
    assert "'default' (SNOWID_LAYOUT)" in message


ORDER_MODELS = """
from django.db import models

from django_snowid.fields import OrderNumberField


class Order(models.Model):
    number = OrderNumberField()
"""

#: A database nobody listens to (PostgreSQL on a port that is free); order numbers in Redis.
DOWN = """
DATABASES = {{"default": {{"ENGINE": "django.db.backends.postgresql", "HOST": "127.0.0.1",
    "PORT": {port}, "NAME": "shop", "USER": "postgres", "OPTIONS": {{"connect_timeout": 2}}}}}}
CACHES = {caches!r}
SNOWID_REDIS_ALIAS = "snowid"
"""


def refused(shop, *args: str, status: int = 1) -> str:
    """What ``manage.py *args`` of ``shop`` said on stderr, refusing with ``status`` and no
    traceback."""
    done = manage_project(shop, *args)
    assert done.returncode == status and "Traceback" not in done.stderr, done.stderr
    return str(done.stderr)


def test_sequences_without_the_sequences_app_says_to_add_it(tmp_path):
    said = refused(project(tmp_path, apps=["django_snowid"], models=""), "snowid_sequences")
    assert "add 'django_snowid.sequences' to INSTALLED_APPS" in said
    assert "Unknown command" not in said


def test_sequences_and_audit_before_migrate_say_to_migrate(tmp_path):
    apps = ["django_snowid", "django_snowid.sequences", "shop"]
    extra = 'SNOWID_ORDER_BACKEND = "database"'
    shop = project(tmp_path, apps=apps, models=ORDER_MODELS, extra=extra)
    assert "manage.py migrate" in refused(shop, "snowid_sequences")
    audited = refused(shop, "snowid_audit", "--skip-checks", status=2)
    assert "A table is missing from the database 'default'" in audited
    assert "manage.py migrate" in audited


def test_sequences_and_recover_with_the_database_down_name_the_database(tmp_path, settings):
    apps = ["django_snowid", "django_snowid.sequences", "shop"]
    down = DOWN.format(port=free_port(), caches=redis_caches(settings.REDIS_URL))
    shop = project(tmp_path, apps=apps, models=ORDER_MODELS, extra=down)
    assert "database 'default'" in refused(shop, "snowid_sequences")
    recovered = refused(shop, "snowid_recover", "--dry-run")
    assert "database 'default'" in recovered and "redis" not in recovered.lower()
