"""The checks of the order-number settings."""

from __future__ import annotations

import pytest

from tests.support import check_ids

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
