"""``store_checks(family)`` says what each feature's own checks say today: an unknown
choice, a Redis client the store cannot get, a table missing from its database."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection

from django_snowid.models import OrderStreamState, WorkerLease
from django_snowid.orders import checks as order_checks
from django_snowid.orders.stores import ORDERS
from django_snowid.sequences.stores import SEQUENCES
from django_snowid.stores import get_store
from django_snowid.stores.checks import store_checks
from django_snowid.workers import checks as worker_checks
from django_snowid.workers.stores import LEASES


def said(messages) -> list[tuple[str, str, str]]:
    return [(m.id, m.msg, m.hint) for m in messages]


def test_an_unknown_choice_is_said_alone(settings):
    settings.SNOWID_ORDER_BACKEND = "memcached"
    settings.SNOWID_REDIS_ALIAS = "nowhere"
    (message,) = store_checks(ORDERS)
    assert said([message]) == said(order_checks.check_order_numbers())
    settings.SNOWID_SEQUENCE_BACKEND = "memcached"
    (message,) = store_checks(SEQUENCES)
    assert message.id == "django_snowid.E300"
    expected = "SNOWID_SEQUENCE_BACKEND is 'memcached'; expected one of ['database', 'redis']."
    assert message.msg == expected


def test_a_redis_client_the_store_cannot_get(settings):
    settings.SNOWID_REDIS_ALIAS = "nowhere"
    settings.SNOWID_ORDER_BACKEND = "redis"
    settings.SNOWID_WORKER_ID_SOURCE = "redis"
    assert [m.id for m in store_checks(ORDERS)] == ["django_snowid.E206"]
    assert said(store_checks(ORDERS)) == said(order_checks.check_order_numbers())
    assert [m.id for m in store_checks(LEASES)] == ["django_snowid.E016"]
    assert said(store_checks(LEASES)) == said(worker_checks.check_worker_settings())
    settings.SNOWID_WORKER_ID_SOURCE = "static"  # no lease store in use
    assert store_checks(LEASES) == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "family, setting, model, check, check_id",
    [
        (ORDERS, {"SNOWID_ORDER_BACKEND": "database"}, OrderStreamState,
         order_checks.check_order_table, "django_snowid.E220"),
        (LEASES, {"SNOWID_WORKER_ID_SOURCE": "database"}, WorkerLease,
         worker_checks.check_lease_table, "django_snowid.E017"),
    ],
)  # fmt: skip
def test_a_table_missing_from_its_database(family, setting, model, check, check_id, settings):
    for name, value in setting.items():
        setattr(settings, name, value)
    assert store_checks(family, ["default"]) == []
    with connection.schema_editor() as editor:
        editor.delete_model(model)
    try:
        ours = store_checks(family, ["default"])
        assert said(ours) == said(check(databases=["default"]))
        if model in [apps.get_model(label) for label in get_store(family).needs.tables]:
            assert [m.id for m in ours] == [check_id]  # SQLite keeps leases beside its file
        assert store_checks(family, ["other"]) == []  # another database's check
        assert store_checks(family) == []  # not a database check
    finally:
        with connection.schema_editor() as editor:
            editor.create_model(model)
