"""Order numbers in tests that move the clock: they keep the host's real time (their
stream's state is shared, and a second is never taken twice), so a jump to the future
leaves no stream ahead of the real clock for the tests after it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tests.testapp.models import ShopOrder
from tests.travel_cases import FUTURE, PAST, TOOLS, travel, unused

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "backend", [pytest.param("redis", marks=pytest.mark.redis), "database"], indirect=True
)
@pytest.mark.parametrize("moment", [PAST, FUTURE], ids=["past", "future"])
@pytest.mark.parametrize("tool", TOOLS)
def test_order_numbers_keep_the_real_time_and_go_on_after_the_block(tool, moment, backend):
    field = ShopOrder._meta.get_field("number")
    with travel(tool, unused(moment), tick=False):
        inside = ShopOrder.objects.create(user_id=5).number
    after = ShopOrder.objects.create(user_id=5).number
    now = datetime.now(timezone.utc)
    for number in (inside, after):
        assert abs(field.decode(number).time - now) < timedelta(minutes=5)
    assert after > inside
