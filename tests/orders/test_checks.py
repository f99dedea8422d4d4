"""The checks of the order-number settings."""

from __future__ import annotations

import time

import pytest
from django.test import override_settings

from tests.support import check_ids
from tests.testapp.models import ShopOrder

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
        ({"SNOWID_ORDER_BLOCK_MAX": 0}, ["django_snowid.E219"]),
        ({"SNOWID_ORDER_BLOCK_MAX": "64"}, ["django_snowid.E219"]),
        ({"SNOWID_ORDER_BLOCK_MAX": 1}, []),
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
    assert sorted(set(check_ids(**overrides))) == expected


def _messages(id_, **overrides):
    from django.core import checks
    from django.test import override_settings

    with override_settings(**overrides):
        return [m for m in checks.run_checks(databases=[]) if m.id == id_]


def test_a_check_digit_that_does_not_fit_says_which_digit_to_give_up():
    """12 + 5 + 2 + 1 digits: the message names the two ways to fit 19, the hint the table."""
    from django_snowid.checks import CHECK_IDS

    message = _messages(E202, SNOWID_ORDER_PACKING="decimal", SNOWID_ORDER_CHECK_DIGIT="luhn")[0]
    assert "sequence_digits=4" in message.msg and "shard_digits=1" in message.msg
    assert "Check digits" in message.hint
    assert "check digit" in CHECK_IDS[E202]


def test_a_concealed_field_without_a_key_is_one_error_that_says_what_to_set():
    """The missing key is E215's alone: no E202 for each field for the same cause."""
    assert sorted(set(check_ids(SNOWID_ORDER_CONCEAL=True))) == ["django_snowid.E215"]
    (message,) = _messages("django_snowid.E215", SNOWID_ORDER_CONCEAL=True)
    assert "SNOWID_ORDER_KEY is not set" in message.msg
    assert "conceal their sequences" not in message.msg  # said of one field as of many
    assert "at least 32 characters" in message.msg


KEY = "the-shop-key-of-concealed-order-numbers-0001"
NEW_KEY = "the-shop-key-of-concealed-order-numbers-0002"


def _in(seconds: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(time.time() + seconds, timezone.utc).isoformat()


@pytest.mark.parametrize(
    ("valid_in", "warned"),
    [(30 * 60, True), (2 * 3600, False), (-60, False), (None, False)],
    ids=["in-30-min", "in-2-hours", "a-minute-ago", "no-rotation"],
)
def test_a_new_key_valid_within_the_hour_is_a_warning(valid_in, warned):
    key = KEY if valid_in is None else [("2020-01-01T00:00:00Z", KEY), (_in(valid_in), NEW_KEY)]
    found = check_ids(SNOWID_ORDER_CONCEAL=True, SNOWID_ORDER_KEY=key)
    assert ("django_snowid.W230" in found) is warned
    assert "django_snowid.E215" not in found
    assert "django_snowid.W230" not in check_ids(SNOWID_ORDER_CONCEAL=False, SNOWID_ORDER_KEY=key)


def _deploy_messages(**settings: object) -> list[object]:
    from django.core import checks

    with override_settings(**settings):
        return [
            m
            for m in checks.run_checks(include_deployment_checks=True, databases=[])
            if m.id in ("django_snowid.E230", "django_snowid.W231")
        ]


@pytest.mark.django_db
def test_a_schedule_the_streams_record_refuses_is_a_deploy_error(backend, settings):
    """The stream records the new key (the processes of the new deploy issue with it):
    a process with the old key alone is told at ``check --deploy``, as its first number
    would be refused; one with the new schedule is not."""
    from django_snowid.core.key_schedule import KeySchedule
    from django_snowid.orders.stores import get_store

    settings.SNOWID_ORDER_CONCEAL = True
    settings.SNOWID_ORDER_KEY = [("2020-01-01T00:00:00Z", KEY), (_in(-3600), NEW_KEY)]
    field = ShopOrder._meta.get_field("number")
    ShopOrder.objects.create(user_id=1)  # the stream records the new key
    new_id = KeySchedule.parse(NEW_KEY).key_id(0)
    assert get_store().keys(field.stream).key_id == new_id
    assert _deploy_messages() == []
    (message,) = _deploy_messages(SNOWID_ORDER_KEY=KEY)
    assert message.id == "django_snowid.E230" and new_id in message.msg
    assert KEY not in str(message) and NEW_KEY not in str(message)


@pytest.mark.django_db
def test_a_key_the_stream_announces_and_this_schedule_lacks_is_a_deploy_warning(backend, settings):
    settings.SNOWID_ORDER_CONCEAL = True
    settings.SNOWID_ORDER_KEY = [("2020-01-01T00:00:00Z", KEY), (_in(2 * 3600), NEW_KEY)]
    ShopOrder.objects.create(user_id=1)  # announces the new key
    assert _deploy_messages() == []
    (message,) = _deploy_messages(SNOWID_ORDER_KEY=KEY)
    assert message.id == "django_snowid.W231"
