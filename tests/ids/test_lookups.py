"""Lookups by creation time through the id: right rows, and the pk index on PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from django.db import connection

from django_snowid.exceptions import LayoutError
from tests.testapp.models import Product, Ticket

pytestmark = pytest.mark.django_db

NOON = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)


def at(model, field: str, moment: datetime, node: int = 0, sequence: int = 0) -> int:
    """An id of ``model.field``'s layout issued at ``moment``."""
    layout = model._meta.get_field(field).layout
    return layout.compose(layout.tick_at(moment), node, sequence)


@pytest.fixture
def products():
    # One product a minute from 11:58 to 12:02, the last of each minute's worker range.
    layout = Product._meta.pk.layout
    made = {}
    for minutes in range(-2, 3):
        moment = NOON + timedelta(minutes=minutes)
        pk = at(Product, "id", moment, layout.max_node, layout.max_sequence)
        made[minutes] = Product.objects.create(pk=pk, name=str(minutes)).pk
    return made


def names(queryset) -> list[str]:
    return list(queryset.order_by("pk").values_list("name", flat=True))


def test_created_after_before_and_range(products):
    assert names(Product.objects.filter(pk__created_after=NOON)) == ["0", "1", "2"]
    assert names(Product.objects.filter(pk__created_before=NOON)) == ["-2", "-1"]
    window = (NOON - timedelta(minutes=1), NOON + timedelta(minutes=1))
    assert names(Product.objects.filter(pk__created_range=window)) == ["-1", "0"]
    # The bounds are ticks: a row issued in the last millisecond before NOON is before it.
    just_before = NOON - timedelta(milliseconds=1)
    assert names(Product.objects.filter(pk__created_after=just_before)) == ["0", "1", "2"]
    assert names(Product.objects.filter(id__created_after=NOON + timedelta(minutes=1))) == [
        "1",
        "2",
    ]


def test_a_non_pk_snowflake_column_and_another_layout():
    tickets = [
        Ticket.objects.create(public_id=at(Ticket, "public_id", NOON + timedelta(hours=h)))
        for h in (-1, 1)
    ]
    found = Ticket.objects.filter(public_id__created_after=NOON)
    assert list(found) == [tickets[1]]
    # The other tickets' pks were issued now; this one in 2040.
    late = Ticket.objects.create(pk=at(Ticket, "id", NOON.replace(year=2040)))
    assert list(Ticket.objects.filter(pk__created_after=NOON.replace(year=2039))) == [late]


@pytest.mark.parametrize("value", [datetime(2026, 3, 1, 12), "2026-03-01", 5])
def test_naive_or_non_datetimes_are_refused(value):
    with pytest.raises(LayoutError, match="aware datetime"):
        list(Product.objects.filter(pk__created_after=value))


def test_the_sql_is_a_plain_range_on_the_column():
    sql = str(Product.objects.filter(pk__created_range=(NOON, NOON + timedelta(hours=1))).query)
    assert "BETWEEN" in sql
    first, last = (
        Product._meta.pk.layout.min_id_at(NOON),
        Product._meta.pk.layout.min_id_at(NOON + timedelta(hours=1)),
    )
    assert f"BETWEEN {first} AND {last - 1}" in sql


@pytest.mark.skipif(connection.vendor != "postgresql", reason="EXPLAIN output of PostgreSQL")
def test_postgresql_answers_through_the_primary_key_index(products):
    with connection.cursor() as cursor:
        # On a five-row table a sequential scan is cheaper; forbid it, so that the plan
        # shows whether the condition can use the index at all (a function on the
        # column could not, and PostgreSQL would scan anyway).
        cursor.execute("SET LOCAL enable_seqscan = off")
        for queryset in (
            Product.objects.filter(pk__created_after=NOON),
            Product.objects.filter(pk__created_range=(NOON, NOON + timedelta(hours=1))),
        ):
            plan = queryset.explain()
            assert f"{Product._meta.db_table}_pkey" in plan, plan
            assert "Seq Scan" not in plan, plan
