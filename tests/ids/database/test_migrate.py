"""``migrate`` says nothing of the database defaults it is about to create (W600 is for
a column that ``migrate`` left without one)."""

from __future__ import annotations

import io

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.db import connection

from django_snowid.ids.database.checks import check_database_defaults

ON_POSTGRESQL = django_settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
pytestmark = [
    pytest.mark.skipif(not ON_POSTGRESQL, reason="database ids need PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def test_migrate_is_silent_about_the_default_it_creates_and_w600_stays_for_a_lost_one():
    try:
        call_command("migrate", "dbidsapp", "0001", verbosity=0)  # 0002 adds the default
        assert check_database_defaults(databases=["default"]) == []  # migrate will fix it
        err = io.StringIO()
        call_command("migrate", "dbidsapp", stdout=io.StringIO(), stderr=err)
        assert "W600" not in err.getvalue()
        assert check_database_defaults(databases=["default"]) == []

        with connection.cursor() as cursor:  # nothing left to migrate, the default lost
            cursor.execute("ALTER TABLE dbidsapp_label ALTER COLUMN code DROP DEFAULT")
        warned = check_database_defaults(databases=["default"])
        assert [m.id for m in warned] == ["django_snowid.W600"]
        assert "dbidsapp_label.code" in warned[0].msg
    finally:
        call_command("migrate", "dbidsapp", "0001", verbosity=0)
        call_command("migrate", "dbidsapp", verbosity=0)
