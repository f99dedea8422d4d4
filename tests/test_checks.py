"""The system checks as a whole: registered by the app config, one message a bad setting, hints
that link to the docs."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import override_settings

from tests.settings import SNOWID_LAYOUTS as TEST_LAYOUTS
from tests.support import check_ids


def test_defaults_pass():
    assert check_ids() == []


def test_checks_are_registered_and_stop_the_check_command():
    with override_settings(SNOWID_WORKER_ID=5000), pytest.raises(SystemCheckError, match="E004"):
        call_command("check", databases=[])


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
    assert sorted(check_ids(**overrides)) == expected


def test_hint_points_at_the_entry_of_its_id():
    with override_settings(SNOWID_WORKER_ID=5000):
        message = next(m for m in checks.run_checks(databases=[]) if m.id == "django_snowid.E004")
    assert message.hint.endswith("python manage.py snowid_explain E004")
    assert "5000" in message.msg


def test_a_redis_client_factory_needs_no_django_redis_cache():
    # A Redis Cluster comes from SNOWID_REDIS_CLIENT_FACTORY: no cache alias is involved.
    redis_parts = {
        "SNOWID_ORDER_BACKEND": "redis",
        "SNOWID_WORKER_ID_SOURCE": "redis",
        "SNOWID_REDIS_ALIAS": "nowhere",
    }
    assert sorted(check_ids(**redis_parts)) == ["django_snowid.E016", "django_snowid.E206"]
    factory = "tests.redis_topologies.current_client"
    assert check_ids(**redis_parts, SNOWID_REDIS_CLIENT_FACTORY=factory) == []


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


def test_a_checklist_lists_the_checks_its_decorator_marks():
    from django.core.checks import Tags

    from django_snowid.checks import checklist

    checks_of_a_feature = checklist()

    @checks_of_a_feature.register(Tags.database)
    def check_something(app_configs=None, **kwargs):
        return []

    assert checks_of_a_feature == [(check_something, Tags.database)]
    assert check_something() == []  # the function itself, unchanged
