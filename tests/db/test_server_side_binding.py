"""PostgreSQL with psycopg 3's server-side binding (``OPTIONS["server_side_binding"]``),
where the driver types every parameter: our fields write (the ints of bigint fields go as
they are, without Django's ``Int8`` wrapper) and read back what they wrote."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection

from tests.testapp.models import Customer, ShopOrder, Ticket

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def server_side_binding() -> Iterator[None]:
    if connection.vendor != "postgresql":
        pytest.skip("psycopg 3's server-side binding (SNOWID_TEST_DB=postgresql)")
    options = connection.settings_dict.setdefault("OPTIONS", {})
    connection.close()
    options["server_side_binding"] = True
    try:
        yield
    finally:
        connection.close()
        del options["server_side_binding"]


def test_issued_bigints_are_written_and_read_back(server_side_binding):
    with connection.cursor() as cursor:
        assert type(cursor.cursor).__name__ == "ServerBindingCursor"
    tickets = [*Ticket.objects.bulk_create([Ticket(title="a"), Ticket(title="b")])]
    tickets.append(Ticket.objects.create(title="c"))
    orders = [*ShopOrder.objects.bulk_create([ShopOrder(user_id=7), ShopOrder(user_id=8)])]
    orders.append(ShopOrder.objects.create(user_id=9))
    customers = [Customer.objects.create(), Customer.objects.create()]

    assert {(t.pk, t.public_id) for t in Ticket.objects.all()} == {
        (t.pk, t.public_id) for t in tickets
    }
    assert sorted(ShopOrder.objects.values_list("number", flat=True)) == sorted(
        o.number for o in orders
    )
    assert sorted(Customer.objects.values_list("number", flat=True)) == [
        c.number for c in customers
    ]
