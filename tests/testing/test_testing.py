"""The helpers of django_snowid.testing: an id at a moment, a pinned worker id, and
whether ids follow a moved clock."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from freezegun import freeze_time

from django_snowid import decode
from django_snowid.exceptions import LayoutError
from django_snowid.testing import follows_moved_clocks, id_at, pin_worker_id
from tests.testapp.models import Product, Ticket
from tests.travel_cases import PAST, unused

pytestmark = pytest.mark.django_db


def test_id_at_is_what_a_row_made_then_carries():
    moment = unused(PAST)
    with pin_worker_id(9), freeze_time(moment):
        made = Product.objects.create().pk
    # The row's sequence starts at a random offset: the same tick and worker, not the id.
    assert id_at(moment, worker=9) <= made < id_at(moment, worker=10)
    decoded = decode(id_at(moment, worker=9, sequence=5))
    assert (decoded.time, decoded.node, decoded.sequence) == (moment, 9, 5)
    assert Product.objects.filter(pk__created_after=moment).get().pk == made


def test_id_at_of_another_layout_and_named_parts():
    noon = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)
    js = decode(id_at(noon, layout="js", worker=1), layout="js")
    assert (js.time, js.node) == (noon, 1)
    dc = decode(id_at(noon, layout="dc", worker={"datacenter": 2, "machine": 5}), layout="dc")
    assert dc.parts == {"datacenter": 2, "machine": 5}
    ticket = Ticket.objects.create(id=id_at(noon, layout="js"))
    assert Ticket.objects.filter(id__created_after=noon).get() == ticket


def test_id_at_refuses_what_the_layout_cannot_hold():
    with pytest.raises(LayoutError, match="naive"):
        id_at(datetime(2026, 1, 1))
    with pytest.raises(LayoutError, match="out of range"):
        id_at(datetime(2019, 1, 1, tzinfo=timezone.utc))  # before the epoch
    with pytest.raises(LayoutError, match="Sequence"):
        id_at(PAST, sequence=4096)


@pytest.mark.parametrize("source", ["database"], indirect=True)
def test_pin_worker_id_overrides_a_leased_worker_id(source):
    with pin_worker_id(513):
        assert decode(Product.objects.create().pk).node == 513

    @pin_worker_id(77)
    def made() -> int:
        return decode(Product.objects.create().pk).node

    assert made() == 77


def test_in_a_test_process_ids_follow_moved_clocks():
    assert follows_moved_clocks()
    assert follows_moved_clocks(layout="js")
