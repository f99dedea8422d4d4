"""What a database error means, read from what each PostgreSQL driver really raises
(psycopg 3's ``sqlstate``, psycopg2's ``pgcode``) once Django wrapped it."""

from __future__ import annotations

import importlib
import random
from types import SimpleNamespace
from typing import Any

import pytest
from django.conf import settings
from django.db.utils import DatabaseErrorWrapper, OperationalError

from django_snowid.db.errors import is_contention, is_lock_refusal, is_lock_timeout


def _server() -> dict[str, Any]:
    db = settings.DATABASES["default"]
    if not db["ENGINE"].endswith("postgresql"):
        pytest.skip("PostgreSQL's drivers (SNOWID_TEST_DB=postgresql)")
    return {"host": db["HOST"], "port": db["PORT"], "user": db["USER"], "dbname": "postgres"}


def _lock_timeout(driver_name: str) -> OperationalError:
    """What Django raises when ``lock_timeout`` runs out under ``driver_name``."""
    driver = importlib.import_module(driver_name)
    key = random.getrandbits(40)
    holder, waiter = driver.connect(**_server()), driver.connect(**_server())
    try:
        holder.autocommit = waiter.autocommit = True
        holder.cursor().execute("SELECT pg_advisory_lock(%s)", [key])
        cursor = waiter.cursor()
        cursor.execute("SET lock_timeout = '20ms'")
        wrapper = DatabaseErrorWrapper(SimpleNamespace(Database=driver, errors_occurred=False))
        with pytest.raises(OperationalError) as refused, wrapper:
            cursor.execute("SELECT pg_advisory_lock(%s)", [key])
        return refused.value
    finally:
        holder.close()
        waiter.close()


@pytest.mark.parametrize("driver", ["psycopg", "psycopg2"])
def test_a_lock_timeout_is_read_from_either_driver(driver):
    pytest.importorskip(driver)
    refused = _lock_timeout(driver)
    assert type(refused.__cause__).__module__.startswith(driver)
    assert is_lock_timeout(refused)
    assert is_contention(refused)
    assert is_lock_refusal(SimpleNamespace(vendor="postgresql"), refused)


def test_another_error_is_no_lock_timeout():
    refused = OperationalError("server closed the connection unexpectedly")
    assert not is_lock_timeout(refused)
    assert not is_lock_refusal(SimpleNamespace(vendor="postgresql"), refused)
