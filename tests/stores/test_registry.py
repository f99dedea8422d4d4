"""The one registry of stores: a family's store built once, built anew after a settings
change, refused with the family's error for a setting that names no store, and every store
still in use told of a fork."""

from __future__ import annotations

import threading
from typing import get_args

import pytest
from django.test import override_settings

from django_snowid.conf import OrderBackend, SequenceBackend, WorkerIdSource
from django_snowid.exceptions import InvalidSequence, OrderNumberError, WorkerIdError
from django_snowid.orders.stores import ORDERS, DatabaseOrderStore
from django_snowid.orders.stores import get_store as order_store
from django_snowid.sequences.stores import SEQUENCES
from django_snowid.sequences.stores import get_store as sequence_store
from django_snowid.stores import Store, get_store
from django_snowid.workers.stores import LEASES, get_lease_store
from django_snowid.workers.stores.base import LeaseRequest
from tests.support import Children, held_slots


def test_each_family_offers_what_its_setting_takes():
    assert list(ORDERS.choices) == list(get_args(OrderBackend))
    assert list(SEQUENCES.choices) == list(get_args(SequenceBackend))
    assert set(LEASES.choices) < set(get_args(WorkerIdSource))
    assert set(get_args(WorkerIdSource)) - set(LEASES.choices) == {"static", "env"}


@pytest.mark.parametrize("backend", ["redis", "database"])
def test_a_store_is_built_once_and_anew_after_a_settings_change(backend, settings):
    settings.SNOWID_ORDER_BACKEND = backend
    first = order_store()
    assert order_store() is first is get_store(ORDERS)
    assert first.name == backend
    settings.SNOWID_REDIS_KEY_PREFIX = "another"
    second = order_store()
    assert second is not first and order_store() is second


def test_threads_asking_at_once_get_one_store(settings):
    settings.SNOWID_ORDER_BACKEND = "database"  # a settings change: nothing built yet
    start = threading.Barrier(8)
    got: list[object] = []

    def ask() -> None:
        start.wait(10)
        got.append(order_store())

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(got) == 8 and len({id(store) for store in got}) == 1


@pytest.mark.parametrize(
    "setting, ask, error, expected",
    [
        (
            "SNOWID_ORDER_BACKEND",
            order_store,
            OrderNumberError,
            "SNOWID_ORDER_BACKEND is 'memcached'; expected one of ['redis', 'database'].",
        ),
        (
            "SNOWID_SEQUENCE_BACKEND",
            sequence_store,
            InvalidSequence,
            "SNOWID_SEQUENCE_BACKEND is 'memcached'; expected one of ['database', 'redis'].",
        ),
        (
            "SNOWID_WORKER_ID_SOURCE",
            get_lease_store,
            WorkerIdError,
            "SNOWID_WORKER_ID_SOURCE is 'memcached'; expected one of "
            "['slot', 'redis', 'database'].",
        ),
    ],
)
def test_a_setting_naming_no_store_is_refused_in_one_wording(setting, ask, error, expected):
    with override_settings(**{setting: "memcached"}), pytest.raises(error) as raised:
        ask()
    assert str(raised.value) == expected


@pytest.mark.django_db
def test_every_store_follows_the_store_protocol(settings, tmp_path):
    settings.SNOWID_WORKER_SLOT_DIR = str(tmp_path)
    stores = [get_store(family, choice) for family in (ORDERS, SEQUENCES, LEASES)
              for choice in family.choices]  # fmt: skip
    for store in stores:
        assert isinstance(store, Store)
        assert store.describe()
        assert store.needs.redis == (store.name == "redis")
    assert isinstance(get_store(ORDERS, "database"), DatabaseOrderStore)
    assert get_store(ORDERS, "database").needs.tables == ("django_snowid.OrderStreamState",)


def _live_until_stopped(ready, stop) -> None:
    ready.set()
    stop.wait(30)


def test_a_store_still_held_after_a_settings_change_lets_go_in_a_forked_child(settings, tmp_path):
    settings.SNOWID_WORKER_SLOT_DIR = str(tmp_path)
    store = get_lease_store("slot")
    assert store.acquire(LeaseRequest("pool", 1, "test", "token", 0)).worker == 0
    settings.SNOWID_REDIS_KEY_PREFIX = "another"  # the registry forgets the store...
    assert get_lease_store("slot") is not store  # ...which its lease still holds
    with Children() as children:
        ready = children.context.Event()
        children.start(_live_until_stopped, ready, children.stop)
        assert ready.wait(20), "the child never started"
        store.release("pool", 0, "token", -1)
        # The child closed its copy of the lock file: the slot is free while it lives.
        assert held_slots(str(tmp_path)) == []
