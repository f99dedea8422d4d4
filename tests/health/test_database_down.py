"""The health checks with the database down: a message that says what happened, never
django-health-check's "Unknown Error" (an exception it did not expect)."""

from __future__ import annotations

import pytest
from django.db import connections
from django.test import override_settings
from health_check.exceptions import ServiceUnavailable

from django_snowid.health import ClockNotBehind
from tests.support import free_port


class ReadsFromOther:
    """Reads of the test app's models go to the database ``other``."""

    def db_for_read(self, model, **hints):
        return "other" if model._meta.app_label == "testapp" else None


@pytest.fixture
def database_down():
    """The database ``other`` cannot be reached (nothing listens where it points)."""
    connection = connections["other"]
    connection.close()
    saved = dict(connection.settings_dict)
    if connection.vendor == "sqlite":
        connection.settings_dict["NAME"] = "/nonexistent-directory/snowid.sqlite3"
    else:
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(free_port()))
    try:
        with override_settings(DATABASE_ROUTERS=[ReadsFromOther()]):
            yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


@pytest.mark.django_db(transaction=True, databases=["default", "other"])
def test_clock_check_with_the_database_down_says_so(database_down):
    with pytest.raises(ServiceUnavailable) as caught:
        ClockNotBehind().run()
    message = str(caught.value)
    assert "could not be read" in message and "'other'" in message
