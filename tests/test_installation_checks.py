"""A project that forgot an app of ours in ``INSTALLED_APPS``, or misspelt a setting: the
system checks say so before ``migrate`` writes anything.

The projects are real settings modules run by ``python -m django`` in a process of their
own: checks registered by ``AppConfig.ready()`` never run there, which is the point.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from django_snowid.checks import CHECK_IDS
from tests import settings as test_settings
from tests.support import manage_project as _manage
from tests.support import project as _project

SNOWFLAKE_MODELS = """
from django.db import models


class Order(models.Model):
    note = models.CharField(max_length=20)


class Invoice(models.Model):
    note = models.CharField(max_length=20)
"""

SEQUENCE_MODELS = """
from django.db import models

from django_snowid.sequences.fields import SequenceField


class Invoice(models.Model):
    number = SequenceField(sequence="invoices")
"""


def _tables(project: Path) -> list[str]:
    path = project / "db.sqlite3"
    if not path.exists():
        return []
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]


def test_snowflake_keys_without_the_app_stop_check_and_migrate_before_anything_is_written(
    tmp_path,
):
    project = _project(tmp_path, apps=["shop"], models=SNOWFLAKE_MODELS)
    refused = _manage(project, "makemigrations", "shop")
    assert refused.returncode == 1 and "django_snowid.E031" in refused.stderr
    made = _manage(project, "makemigrations", "shop", "--skip-checks")  # as if made earlier
    assert made.returncode == 0, made.stderr

    checked = _manage(project, "check")
    assert checked.returncode == 1, checked.stdout
    assert "django_snowid.E031" in checked.stderr
    assert "'django_snowid' is not in INSTALLED_APPS" in checked.stderr
    assert "shop.Invoice.id (and 1 more)" in checked.stderr
    assert checked.stderr.count("django_snowid.E031") == 1  # once, not once a model

    migrated = _manage(project, "migrate")
    assert migrated.returncode == 1
    assert "django_snowid.E031" in migrated.stderr and "Traceback" not in migrated.stderr
    assert _tables(project) == []  # nothing half-migrated


#: The ``shop/admin.py`` of docs/admin.rst, and the other modules the docs have a project
#: import: without ``django_snowid`` installed, importing them must leave E031 to answer.
DOCS_ADMIN = """
from django.contrib import admin

from django_snowid.admin import SnowflakeAdminMixin, SnowflakeModelAdmin
from django_snowid.drf import SnowflakeModelSerializer
from django_snowid.fields import OrderNumberQuerySet
from django_snowid.ids.publicids import PublicIdConverter
from django_snowid.sequences.compat import get_next_value

from .models import Invoice, Order


@admin.register(Order)
class OrderAdmin(SnowflakeAdminMixin, admin.ModelAdmin):
    list_display = ["note"]


admin.site.register(Invoice, SnowflakeModelAdmin)
"""

#: The admin's needs, as the test settings meet them.
ADMIN_SETTINGS = f"""
INSTALLED_APPS[:0] = ["django.contrib.admin", "django.contrib.messages", "django.contrib.sessions"]
MIDDLEWARE = {test_settings.MIDDLEWARE!r}
TEMPLATES = {test_settings.TEMPLATES!r}
"""


def test_the_docs_admin_module_without_the_app_leaves_the_answer_to_e031(tmp_path):
    project = _project(tmp_path, apps=["shop"], models=SNOWFLAKE_MODELS, extra=ADMIN_SETTINGS)
    (project / "shop" / "admin.py").write_text(DOCS_ADMIN)
    checked = _manage(project, "check")
    assert "Traceback" not in checked.stderr, checked.stderr[-2000:]
    assert checked.returncode == 1
    assert "django_snowid.E031" in checked.stderr
    assert "'django_snowid' is not in INSTALLED_APPS" in checked.stderr


def test_sequence_fields_without_the_sequences_app_stop_check_and_migrate(tmp_path):
    project = _project(tmp_path, apps=["django_snowid", "shop"], models=SEQUENCE_MODELS)
    made = _manage(project, "makemigrations", "shop", "--skip-checks")
    assert made.returncode == 0, made.stderr

    checked = _manage(project, "check")
    assert checked.returncode == 1
    assert "django_snowid.E313" in checked.stderr
    assert "'django_snowid.sequences' is not in INSTALLED_APPS" in checked.stderr
    assert "shop.Invoice.number" in checked.stderr

    migrated = _manage(project, "migrate")
    assert migrated.returncode == 1 and "django_snowid.E313" in migrated.stderr
    assert _tables(project) == []


def test_sequence_fields_without_either_app_name_both(tmp_path):
    project = _project(tmp_path, apps=["shop"], models=SEQUENCE_MODELS)
    checked = _manage(project, "check")
    assert checked.returncode == 1
    assert "django_snowid.E031" in checked.stderr and "django_snowid.E313" in checked.stderr


def test_a_misspelt_setting_names_the_closest_real_one(tmp_path):
    project = _project(
        tmp_path,
        apps=["django_snowid", "shop"],
        models=SNOWFLAKE_MODELS,
        extra="""
            SNOWID_WORKER_SOURCE = "static"
            SNOWID_SEQUENCE = {"invoices": {}}
        """,
    )
    checked = _manage(project, "check")
    assert checked.returncode == 0, checked.stderr  # warnings only
    out = checked.stderr + checked.stdout
    assert "django_snowid.W031" in out
    assert "SNOWID_WORKER_SOURCE is not a setting of django-snowid" in out
    assert "SNOWID_WORKER_ID_SOURCE" in out
    assert "SNOWID_SEQUENCE is not a setting" in out and "SNOWID_SEQUENCES?" in out


def test_setting_names_check_is_registered(settings):
    settings.SNOWID_ORDER_ZONES = "UTC"
    with pytest.raises(SystemCheckError, match=r"W031.*SNOWID_ORDER_ZONES.*SNOWID_ORDER_ZONE\?"):
        call_command("check", fail_level="WARNING", databases=[])


def test_setting_names_every_real_setting_passes_and_a_name_far_from_all_is_still_reported(
    settings,
):
    from django_snowid.conf import SnowidSettings
    from django_snowid.settings_checks import check_setting_names

    for setting in SnowidSettings.table():
        setattr(settings, setting.name, setting.default)
    assert check_setting_names() == []
    settings.SNOWID_ZZZ = 1
    (warning,) = check_setting_names()
    assert warning.id == "django_snowid.W031" and "SNOWID_ZZZ" in warning.msg
    assert "Did you mean" not in warning.msg  # nothing close: no guess


def test_the_new_ids_are_registered():
    assert {"django_snowid.E031", "django_snowid.E313", "django_snowid.W031"} <= set(CHECK_IDS)
