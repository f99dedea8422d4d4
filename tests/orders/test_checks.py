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
