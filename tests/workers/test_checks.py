"""The checks of the worker-id settings and sources."""

from __future__ import annotations

import pytest

from tests.support import check_ids


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
    assert check_ids(**settings) == []
    monkeypatch.setenv("SNOWID_TEST_WORKER", "seven")
    assert "django_snowid.E006" in check_ids(**settings)


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
    assert sorted(check_ids(**overrides)) == expected


def test_slot_with_a_fixed_host_part_is_not_warned():
    # Every layout leases its last part; SNOWID_WORKER_ID gives each host its datacenter.
    assert (
        check_ids(
            SNOWID_WORKER_ID_SOURCE="slot",
            SNOWID_WORKER_ID={"datacenter": 2},
            **DC,
        )
        == []
    )


def test_slot_without_a_worker_id_setting_is_warned(settings):
    del settings.SNOWID_WORKER_ID
    assert check_ids(SNOWID_WORKER_ID_SOURCE="slot", **DC) == ["django_snowid.W010"]


def test_the_defaults_lease_from_the_database_without_a_check_message(settings):
    del settings.SNOWID_WORKER_ID_SOURCE
    del settings.SNOWID_WORKER_ID
    assert check_ids() == []
    from django_snowid.conf import conf

    assert conf.WORKER_ID_SOURCE == "database"


def test_env_source_without_its_variable_passes_the_checks_but_not_the_deploy_checks():
    # migrate, check and collectstatic issue no ids: they run without the variable; check
    # --deploy, run where the server runs, says the first id would refuse.
    from django.core import checks
    from django.test import override_settings

    unset = {"SNOWID_WORKER_ID_SOURCE": "env", "SNOWID_WORKER_ID_ENV": "SNOWID_TEST_UNSET_VAR"}
    assert check_ids(**unset) == []
    with override_settings(**unset):
        deploy = checks.run_checks(include_deployment_checks=True, databases=[])
    (message,) = [m for m in deploy if m.id == "django_snowid.E050"]
    assert "SNOWID_TEST_UNSET_VAR is not set" in message.msg


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
