"""The time-travel tests again in a Django ``TestCase``, as a project's suite writes them
(each tool as its docs show it: a decorator, a context manager), on a leased worker id."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
import time_machine
from django.contrib.auth.models import User
from django.test import TestCase, override_settings
from freezegun import freeze_time

from tests.testapp.models import Product
from tests.travel_cases import (
    FUTURE,
    MANY,
    MANY_CREATES,
    PAST,
    created,
    problems_of_later_row,
    problems_of_moved_rows,
    travel,
    unused,
)

#: Moments of this module's own (the decorators below need them at import).
FROZEN, MACHINED = unused(PAST), unused(FUTURE)


@pytest.mark.timeout(60)  # a generator that waits for a standing clock never returns
@override_settings(SNOWID_WORKER_ID_SOURCE="database")
class TimeTravelTests(TestCase):
    def make_rows(self, count: int) -> list[int]:
        return [Product.objects.create(name=str(n)).pk for n in range(count)]

    def assert_fine(self, problems: list[str]) -> None:
        self.assertEqual(problems, [])

    @freeze_time(FROZEN)
    def test_a_frozen_test_method_makes_rows_of_its_time(self):
        pks = self.make_rows(10)
        self.assert_fine(problems_of_moved_rows(pks, FROZEN, still=True))
        self.assertEqual({created(pk) for pk in pks}, {FROZEN})
        self.assertEqual(Product.objects.filter(pk__created_after=FROZEN).count(), 10)

    @time_machine.travel(MACHINED, tick=False)
    def test_a_travelling_test_method_makes_rows_of_its_time(self):
        pks = self.make_rows(10)
        self.assertEqual({created(pk) for pk in pks}, {MACHINED})
        self.assertEqual(
            Product.objects.filter(pk__created_before=MACHINED + timedelta(milliseconds=1)).count(),
            10,
        )

    def test_past_and_future_then_the_real_time(self):
        for tool in ("freezegun", "time-machine"):
            for moment in (unused(PAST), unused(FUTURE)):
                with self.subTest(tool=tool, moment=moment):
                    with travel(tool, moment):
                        pks = self.make_rows(5)
                    still = tool == "freezegun"
                    self.assert_fine(problems_of_moved_rows(pks, moment, still=still))
                    before = datetime.now(timezone.utc)
                    later = Product.objects.create(name="later").pk
                    self.assert_fine(problems_of_later_row(later, before))

    def test_ten_thousand_rows_in_one_frozen_millisecond(self):
        moment = unused(PAST)
        with time_machine.travel(moment, tick=False):
            rows = Product.objects.bulk_create(Product(name=str(n)) for n in range(MANY))
        pks = [row.pk for row in rows]
        self.assert_fine(problems_of_moved_rows(pks, moment, still=True, borrowed_ms=3))
        self.assertEqual(len(set(pks)), MANY)

    def test_more_creates_than_a_millisecond_holds_never_wait(self):
        moment = unused(FUTURE)
        with freeze_time(moment):
            pks = self.make_rows(MANY_CREATES)
        self.assert_fine(problems_of_moved_rows(pks, moment, still=True, borrowed_ms=1))
        before = datetime.now(timezone.utc)
        self.assert_fine(problems_of_later_row(Product.objects.create().pk, before))

    def test_the_admin_shows_the_frozen_time(self):
        moment = unused(PAST)
        with freeze_time(moment):
            Product.objects.create(name="then")
        self.client.force_login(User.objects.create_superuser("admin", "a@example.com", "pw"))
        page = self.client.get("/admin/testapp/product/").content.decode()
        self.assertIn(moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3], page)
