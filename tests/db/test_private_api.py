"""Each name of Django's that is not public API and that we depend on (listed, with why,
in ``django_snowid/db/private.py``) is what we expect: a Django release that changes one
fails here, by name, before it fails anywhere else."""

from __future__ import annotations

import inspect

import pytest
from django.apps import AppConfig, apps
from django.contrib import admin
from django.db import connection, models
from django.db.models.query import QuerySet
from django.test.utils import CaptureQueriesContext

from django_snowid.db import private
from django_snowid.db.returning import execute
from tests.testapp.models import PlainAuto, Product, ShopOrder


def test_model_do_insert_takes_what_the_retry_passes_on():
    parameters = list(inspect.signature(models.Model._do_insert).parameters)
    assert parameters == ["self", "manager", "using", "fields", "returning_fields", "raw"]
    # The order-number retry wraps it on models with an order number, and only there.
    assert ShopOrder._do_insert is not models.Model._do_insert
    assert PlainAuto._do_insert is models.Model._do_insert


def test_get_pk_value_on_save_is_where_save_and_bulk_create_ask_for_a_key():
    assert list(inspect.signature(models.Field.get_pk_value_on_save).parameters) == [
        "self",
        "instance",
    ]
    assert "get_pk_value_on_save" in inspect.getsource(models.Model._save_table)
    assert "get_pk_value_on_save" in inspect.getsource(QuerySet._prepare_for_bulk_create)


@pytest.mark.django_db
def test_a_new_row_whose_key_has_a_default_is_inserted_without_an_update_first():
    with CaptureQueriesContext(connection) as queries:
        Product.objects.create(name="one statement")
    assert [q["sql"].split()[0] for q in queries.captured_queries] == ["INSERT"]


def test_an_app_config_says_whether_it_sets_its_default_auto_field():
    class Sets(AppConfig):
        default_auto_field = "django.db.models.BigAutoField"

    assert private.default_auto_field_overridden(
        Sets("tests.testapp", apps.get_app_config("testapp").module)
    )
    assert not private.default_auto_field_overridden(apps.get_app_config("testapp"))


def test_the_admin_site_finds_a_model_s_admin():
    assert isinstance(private.model_admin(admin.site, Product), admin.ModelAdmin)
    assert private.model_admin(admin.site, PlainAuto) is None


@pytest.mark.django_db(transaction=True)
def test_a_new_connection_is_not_the_thread_s_own():
    own = private.new_connection(connection.alias)
    try:
        assert own is not connection
        own.ensure_connection()
        assert own.get_autocommit()
        private.close_if_unusable(own)
    finally:
        own.close()


@pytest.mark.django_db(transaction=True)  # a connection closes only outside atomic()
def test_the_kept_cursor_lives_as_long_as_the_driver_connection():
    cursor = private.kept_cursor(connection)
    assert private.kept_cursor(connection) is cursor
    assert isinstance(connection.queries_logged, bool)
    assert getattr(connection, private.KEPT_CURSOR)[0] is connection.connection
    assert hasattr(cursor, "cursor")  # the driver's cursor, whose lastrowid MariaDB needs
    connection.close()
    assert private.kept_cursor(connection) is not cursor


@pytest.mark.django_db
def test_last_insert_id_reads_the_driver_s_lastrowid():
    if connection.vendor != "mysql":
        pytest.skip("LAST_INSERT_ID(expr) is MariaDB's and MySQL's")
    row = PlainAuto.objects.create(name="x")
    table, pk = PlainAuto._meta.db_table, row.pk
    sql = f"UPDATE {table} SET id = LAST_INSERT_ID(id + 1) WHERE id = %s"  # as db/returning
    assert execute(connection, sql, [pk]) == pk + 1


def test_sqlite_says_whether_its_database_is_in_memory():
    if connection.vendor != "sqlite":
        assert not private.is_in_memory_sqlite(connection)
        return
    assert private.is_in_memory_sqlite(connection) is connection.is_in_memory_db()


@pytest.mark.django_db
def test_the_unique_constraint_of_a_column_is_found_by_introspection():
    table = ShopOrder._meta.db_table
    assert len(private.unique_constraints(connection, table, "number")) == 1
    assert private.unique_constraints(connection, table, "user_id") == frozenset()


def test_the_built_in_lookups_sql_is_keyed_by_their_names():
    assert private.operator_sql(connection, "gte", "%s").startswith(">=")
    assert private.operator_sql(connection, "lt", "%s").startswith("<")


def test_the_migration_recorder_s_model_takes_its_key_from_default_auto_field():
    from django.db.migrations.recorder import MigrationRecorder

    model = private.migration_recorder_model()
    assert model is MigrationRecorder.Migration
    assert model._meta.db_table == "django_migrations"
    assert model._meta.app_config is None  # no app: DEFAULT_AUTO_FIELD decides its key
    assert type(model._meta.pk).__name__ == "SnowflakeAutoField"
