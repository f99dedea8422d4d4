"""The checks of Snowflake ids and layouts."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from django.test import override_settings

from tests.support import ROOT, check_ids


def test_time_bits_exhausted_and_running_out():
    now = datetime.now(timezone.utc)
    # 35 bits of ms last about 397 days
    short = {"time_bits": 35, "node": {"worker": 10}, "sequence_bits": 12}
    assert "django_snowid.E005" in check_ids(
        SNOWID_LAYOUT=short, SNOWID_EPOCH=now - timedelta(days=500)
    )
    assert "django_snowid.W001" in check_ids(
        SNOWID_LAYOUT=short, SNOWID_EPOCH=now - timedelta(days=30)
    )
    assert check_ids(SNOWID_LAYOUT="classic", SNOWID_EPOCH=now - timedelta(days=30)) == []


def test_field_naming_an_unknown_layout():
    # tests.testapp.Ticket uses the layouts "js" and "dc"
    assert "django_snowid.E101" in check_ids(SNOWID_LAYOUTS={"dc": "datacenter"})


@pytest.mark.parametrize("epoch", ["2020-01-01T00:00:00", "not a date"])
def test_a_bad_epoch_is_one_error_not_one_a_layout(epoch):
    # Not E003 for every layout that uses it, nor E101 for fields whose layout is
    # configured (and only invalid through the epoch).
    assert check_ids(SNOWID_EPOCH=epoch) == ["django_snowid.E001"]


def test_w030_names_an_app_whose_default_auto_field_overrides_ours():
    from django.apps import apps

    from django_snowid.ids.checks import check_app_default_auto_field

    config = apps.get_app_config("testapp")
    assert check_app_default_auto_field([config]) == []  # takes DEFAULT_AUTO_FIELD
    # The same app had startapp's line been left in its apps.py: the check runs on what
    # the models got, so a fake config is not enough; the README quick-start test makes
    # a real project with that line (tests/project/test_readme_quickstart.py).
    with override_settings(DEFAULT_AUTO_FIELD="django.db.models.BigAutoField"):
        assert check_app_default_auto_field([config]) == []  # not ours: nothing to say


def test_w030_reads_well_for_one_model_and_for_several(tmp_path):
    """A real app with startapp's line in its apps.py (the models' keys are decided when
    they are defined, so it takes a project of its own)."""
    import subprocess
    import sys
    import textwrap

    app = tmp_path / "crm"
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "apps.py").write_text(
        "from django.apps import AppConfig\n\n\nclass CrmConfig(AppConfig):\n"
        '    default_auto_field = "django.db.models.BigAutoField"\n    name = "crm"\n'
    )
    (tmp_path / "w030_settings.py").write_text(
        textwrap.dedent(
            """
            SECRET_KEY = "w030"
            INSTALLED_APPS = ["django.contrib.contenttypes", "django_snowid", "crm"]
            DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
            DEFAULT_AUTO_FIELD = "django_snowid.fields.SnowflakeAutoField"
            """
        )
    )

    def check(models: str) -> str:
        (app / "models.py").write_text(f"from django.db import models\n\n{models}")
        done = subprocess.run(
            [sys.executable, "-m", "django", "check", "--settings", "w030_settings"],
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{tmp_path}:{ROOT}"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "django_snowid.W030" in done.stderr, done.stderr
        return " ".join(done.stderr.split())

    one = check("class Customer(models.Model):\n    pass\n")
    assert "its model Customer gets no Snowflake primary key" in one, one
    two = check(
        "class Customer(models.Model):\n    pass\n\n\nclass Lead(models.Model):\n    pass\n"
    )
    assert "its models Customer, Lead get no Snowflake primary key" in two, two
