from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import override_settings

from tests.settings import SNOWID_LAYOUTS as TEST_LAYOUTS


def ids(**settings) -> list[str]:
    with override_settings(**settings):
        return [m.id for m in checks.run_checks() if m.id and m.id.startswith("django_snowid")]


def test_defaults_pass():
    assert ids() == []


def test_checks_are_registered_and_stop_the_check_command():
    with override_settings(SNOWID_WORKER_ID=5000), pytest.raises(SystemCheckError, match="E004"):
        call_command("check")


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"SNOWID_EPOCH": "2020-01-01T00:00:00"}, ["django_snowid.E001"]),
        ({"SNOWID_EPOCH": "not a date"}, ["django_snowid.E001"]),
        ({"SNOWID_EPOCH": datetime.now(timezone.utc) + timedelta(days=1)}, ["django_snowid.E002"]),
        (
            {"SNOWID_LAYOUT": {"time_bits": 42, "node": {"w": 10}, "sequence_bits": 12}},
            ["django_snowid.E003"],
        ),
        ({"SNOWID_LAYOUT": "no-such-preset"}, ["django_snowid.E003"]),
        (
            {
                "SNOWID_LAYOUTS": {
                    **TEST_LAYOUTS,
                    "bad": {"time_bits": 0, "node": {}, "sequence_bits": 1},
                }
            },
            ["django_snowid.E003"],
        ),
        ({"SNOWID_WORKER_ID": 1024}, ["django_snowid.E004"] * 4),  # one a layout
        ({"SNOWID_WORKER_ID": {"datacenter": 1}}, ["django_snowid.E004"] * 4),
        ({"SNOWID_WORKER_ID_SOURCE": "zookeeper"}, ["django_snowid.E006"]),
        ({"SNOWID_CLOCK_BACKWARDS_TOLERANCE_MS": -1}, ["django_snowid.E007"]),
        ({"SNOWID_CLOCK_BACKWARDS_TOLERANCE_MS": "5"}, ["django_snowid.E007"]),
        ({"SNOWID_ORDER_BACKEND": "memcached"}, ["django_snowid.E205"]),
        (
            {"SNOWID_ORDER_BACKEND": "redis", "SNOWID_REDIS_ALIAS": "nowhere"},
            ["django_snowid.E206"],
        ),
        ({"SNOWID_ORDER_RANDOM_START": -1}, ["django_snowid.E207"]),
        ({"SNOWID_ORDER_RANDOM_START": 2**14}, ["django_snowid.E207"]),
        ({"SNOWID_ORDER_WHEN_FULL": "drop"}, ["django_snowid.E208"]),
    ],
)
def test_bad_settings(overrides, expected):
    # Exactly the one message: a bad setting is not reported again by the checks that
    # read it (layouts, worker ids, fields).
    assert sorted(ids(**overrides)) == expected


E202 = "django_snowid.E202"  # per field whose format takes the setting


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"SNOWID_ORDER_ALLOW_DST": "yes"}, ["django_snowid.E210"]),
        ({"SNOWID_ORDER_MAX_WAIT_MS": "2s"}, ["django_snowid.E211"]),
        ({"SNOWID_ORDER_MAX_WAIT_MS": -1}, ["django_snowid.E211"]),
        ({"SNOWID_ORDER_MAX_WAIT_MS": True}, ["django_snowid.E211"]),
        ({"SNOWID_ORDER_MAX_WAIT_MS": 2500.5}, []),
        ({"SNOWID_ORDER_MAX_BACKWARDS_S": 0}, ["django_snowid.E212"]),
        ({"SNOWID_ORDER_MAX_BACKWARDS_S": 2.5}, ["django_snowid.E212"]),
        ({"SNOWID_ORDER_MAX_BACKWARDS_S": 3600}, []),
        ({"SNOWID_ORDER_INSERT_RETRIES": "3"}, ["django_snowid.E213"]),
        ({"SNOWID_ORDER_INSERT_RETRIES": -1}, ["django_snowid.E213"]),
        ({"SNOWID_ORDER_INSERT_RETRIES": 0}, []),
        ({"SNOWID_ORDER_SEQUENCE_BITS": 70}, [E202, "django_snowid.E214"]),
        ({"SNOWID_ORDER_PACKING": "hex"}, [E202, "django_snowid.E214"]),
        ({"SNOWID_ORDER_ZONE": "Nowhere/Else"}, [E202, "django_snowid.E214"]),
        ({"SNOWID_ORDER_SHARD_DIGITS": "2"}, [E202, "django_snowid.E214"]),
        ({"SNOWID_ORDER_WHEN_FULL": "drop"}, ["django_snowid.E208"]),
        ({"SNOWID_ORDER_RANDOM_START": "5"}, ["django_snowid.E207"]),
        ({"SNOWID_ORDER_BACKEND": "memcached"}, ["django_snowid.E205"]),
    ],
)
def test_every_order_setting_is_checked(overrides, expected):
    """The exact list: one error for each bad setting, nothing else, in any order (Django
    keeps its checks in a set). A format setting also gives an E202 for each field that
    uses it: how many depends on the models the test run has loaded, so each id is
    counted once."""
    assert sorted(set(ids(**overrides))) == expected


def test_time_bits_exhausted_and_running_out():
    now = datetime.now(timezone.utc)
    # 35 bits of ms last about 397 days
    short = {"time_bits": 35, "node": {"worker": 10}, "sequence_bits": 12}
    assert "django_snowid.E005" in ids(SNOWID_LAYOUT=short, SNOWID_EPOCH=now - timedelta(days=500))
    assert "django_snowid.W001" in ids(SNOWID_LAYOUT=short, SNOWID_EPOCH=now - timedelta(days=30))
    assert ids(SNOWID_LAYOUT="classic", SNOWID_EPOCH=now - timedelta(days=30)) == []


def test_worker_id_from_the_environment(monkeypatch):
    monkeypatch.setenv("SNOWID_TEST_WORKER", "datacenter=2,machine=9")
    settings = {
        "SNOWID_WORKER_ID_SOURCE": "env",
        "SNOWID_WORKER_ID_ENV": "SNOWID_TEST_WORKER",
        "SNOWID_LAYOUT": "datacenter",
        "SNOWID_LAYOUTS": {
            "js": "datacenter",
            "dc": "datacenter",
            # tests.testapp.ShardedOrder needs shard bits
            "sharded": {"preset": "datacenter", "sequence_bits": 8, "shard_bits": 4},
        },
    }
    assert ids(**settings) == []
    monkeypatch.setenv("SNOWID_TEST_WORKER", "seven")
    assert "django_snowid.E006" in ids(**settings)


def test_field_naming_an_unknown_layout():
    # tests.testapp.Ticket uses the layouts "js" and "dc"
    assert "django_snowid.E101" in ids(SNOWID_LAYOUTS={"dc": "datacenter"})


def test_hint_links_to_the_entry_of_its_id():
    with override_settings(SNOWID_WORKER_ID=5000):
        message = next(m for m in checks.run_checks() if m.id == "django_snowid.E004")
    assert message.hint.endswith("reference/checks.html#django-snowid-e004")
    assert "5000" in message.msg


@pytest.mark.parametrize("epoch", ["2020-01-01T00:00:00", "not a date"])
def test_a_bad_epoch_is_one_error_not_one_a_layout(epoch):
    # Not E003 for every layout that uses it, nor E101 for fields whose layout is
    # configured (and only invalid through the epoch).
    assert ids(SNOWID_EPOCH=epoch) == ["django_snowid.E001"]


def test_w030_names_an_app_whose_default_auto_field_overrides_ours():
    from django.apps import apps

    from django_snowid.ids.checks import check_app_default_auto_field

    config = apps.get_app_config("testapp")
    assert check_app_default_auto_field([config]) == []  # takes DEFAULT_AUTO_FIELD
    # The same app had startapp's line been left in its apps.py: the check runs on what
    # the models got, so a fake config is not enough; the README quick-start test makes
    # a real project with that line (tests/test_readme_quickstart.py).
    with override_settings(DEFAULT_AUTO_FIELD="django.db.models.BigAutoField"):
        assert check_app_default_auto_field([config]) == []  # not ours: nothing to say


# Every layout of the test app with a host part before the leased one.
DC_SHARDED = {"preset": "datacenter", "sequence_bits": 8, "shard_bits": 4}
DC = {
    "SNOWID_LAYOUT": "datacenter",
    "SNOWID_LAYOUTS": {"js": "datacenter", "dc": "datacenter", "sharded": DC_SHARDED},
}


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"SNOWID_WORKER_LEASE_TTL_S": 0}, ["django_snowid.E010"]),
        ({"SNOWID_WORKER_LEASE_TTL_S": "30"}, ["django_snowid.E010"]),
        ({"SNOWID_WORKER_LEASE_TTL_S": True}, ["django_snowid.E010"]),
        ({"SNOWID_WORKER_POOL_SIZE": -1}, ["django_snowid.E011"]),
        ({"SNOWID_WORKER_POOL_SIZE": 0}, ["django_snowid.E011"]),
        ({"SNOWID_WORKER_POOL_SIZE": 4.5}, ["django_snowid.E011"]),
        ({"SNOWID_WORKER_RESUME_MAX_WAIT_MS": -1}, ["django_snowid.E012"]),
        ({"SNOWID_WORKER_SLOT_DIR": 7}, ["django_snowid.E013"]),
        ({"SNOWID_WORKER_ID_ENV": ""}, ["django_snowid.E014"]),
        ({"SNOWID_WORKER_ID_ENV": "A=B"}, ["django_snowid.E014"]),
        ({"SNOWID_WORKER_ID": -3}, ["django_snowid.E015"]),
        ({"SNOWID_WORKER_ID": True}, ["django_snowid.E015"]),
        (
            {"SNOWID_WORKER_ID": {"datacenter": "1"}},
            ["django_snowid.E015"],
        ),
        (
            {
                "SNOWID_WORKER_ID_SOURCE": "redis",
                "SNOWID_REDIS_ALIAS": "nowhere",
                "SNOWID_ORDER_BACKEND": "database",
            },
            ["django_snowid.E016"],
        ),
        (
            {
                "SNOWID_WORKER_ID_SOURCE": "redis",
                "SNOWID_REDIS_ALIAS": "default",
                "SNOWID_ORDER_BACKEND": "database",
            },
            ["django_snowid.E016"],
        ),
        ({"SNOWID_WORKER_ID_SOURCE": "slot"}, ["django_snowid.W010"]),
        (
            {
                # js53 leases its only part: nothing tells hosts apart there
                "SNOWID_WORKER_ID_SOURCE": "slot",
                "SNOWID_WORKER_ID": {"datacenter": 2},
                **DC,
                "SNOWID_LAYOUTS": {"js": "js53", "dc": "datacenter", "sharded": DC_SHARDED},
            },
            ["django_snowid.W010"],
        ),
    ],
)
def test_each_worker_setting_has_a_check(overrides, expected):
    assert sorted(ids(**overrides)) == expected


def test_a_redis_client_factory_needs_no_django_redis_cache():
    # A Redis Cluster comes from SNOWID_REDIS_CLIENT_FACTORY: no cache alias is involved.
    redis_parts = {
        "SNOWID_ORDER_BACKEND": "redis",
        "SNOWID_WORKER_ID_SOURCE": "redis",
        "SNOWID_REDIS_ALIAS": "nowhere",
    }
    assert sorted(ids(**redis_parts)) == ["django_snowid.E016", "django_snowid.E206"]
    factory = "tests.redis_topologies.current_client"
    assert ids(**redis_parts, SNOWID_REDIS_CLIENT_FACTORY=factory) == []


def test_slot_with_a_fixed_host_part_is_not_warned():
    # Every layout leases its last part; SNOWID_WORKER_ID gives each host its datacenter.
    assert (
        ids(
            SNOWID_WORKER_ID_SOURCE="slot",
            SNOWID_WORKER_ID={"datacenter": 2},
            **DC,
        )
        == []
    )


def test_slot_without_a_worker_id_setting_is_warned(settings):
    del settings.SNOWID_WORKER_ID
    assert ids(SNOWID_WORKER_ID_SOURCE="slot", **DC) == ["django_snowid.W010"]


def test_the_defaults_lease_from_the_database_without_a_check_message(settings):
    del settings.SNOWID_WORKER_ID_SOURCE
    del settings.SNOWID_WORKER_ID
    assert ids() == []
    from django_snowid.conf import conf

    assert conf.WORKER_ID_SOURCE == "database"


def test_env_source_without_its_variable_passes_the_checks():
    # migrate, check and collectstatic issue no ids: they run without the variable.
    assert ids(SNOWID_WORKER_ID_SOURCE="env", SNOWID_WORKER_ID_ENV="SNOWID_TEST_UNSET_VAR") == []


def test_every_check_is_registered_by_the_app_config():
    # AppConfig.ready() registers them (importing the module registers nothing).
    from django.core.checks.registry import registry

    from django_snowid import checks as snowid_checks
    from django_snowid.ids import checks as ids_checks
    from django_snowid.orders import checks as orders_checks
    from django_snowid.sequences import checks as sequence_checks
    from django_snowid.workers import checks as workers_checks

    features = (snowid_checks, ids_checks, orders_checks, workers_checks)
    ours = {check for feature in features for check, _tag in feature.CHECKS}
    ours |= {sequence_checks.check_sequences}
    assert ours <= set(registry.get_checks(include_deployment_checks=True))


@pytest.mark.parametrize("text", ["9" * 5000, "machine=" + "9" * 5000, "٣", "machine=-1", "7,"])
def test_worker_id_text_goes_through_the_one_digit_parser(text):
    # What an environment variable holds: the digit parser of the ids bounds its length
    # before int() (which raises its own ValueError past 4,300 digits).
    from django_snowid.exceptions import WorkerIdError
    from django_snowid.workers.sources import parse_worker_id

    with pytest.raises(WorkerIdError, match=r"^X is "):
        parse_worker_id(text, origin="X")
    assert parse_worker_id(" 7 ", origin="X") == 7  # surrounding spaces are trimmed
    assert parse_worker_id("datacenter=1, machine=3", origin="X") == {"datacenter": 1, "machine": 3}


def test_w030_reads_well_for_one_model_and_for_several(tmp_path):
    """A real app with startapp's line in its apps.py (the models' keys are decided when
    they are defined, so it takes a project of its own)."""
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

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
    root = Path(__file__).resolve().parent.parent

    def check(models: str) -> str:
        (app / "models.py").write_text(f"from django.db import models\n\n{models}")
        done = subprocess.run(
            [sys.executable, "-m", "django", "check", "--settings", "w030_settings"],
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{tmp_path}:{root}"},
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
