"""strawberry-graphql-django: a schema of our fields builds; ids, order numbers, sequence
values and foreign keys to them travel as strings; what a client sends for them is refused
as the REST fields refuse it."""

from __future__ import annotations

import pytest
import strawberry
import strawberry_django
from strawberry import relay

from tests.graphql.cases import BAD_IDS
from tests.testapp.models import Customer, Parcel, Purchase, Shopper, Ticket
from tests.testapp.strawberry_schema import schema

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("database_orders")]


def execute(text: str, variables: dict | None = None):
    return schema.execute_sync(text, variable_values=variables)


@pytest.fixture
def purchase():
    return Purchase.objects.create(shopper=Shopper.objects.create(name="ada"))


def test_a_schema_of_our_fields_builds_and_answers_strings(purchase):
    assert purchase.number > 2**53 and purchase.receipt > 2**53  # the case that matters
    result = execute("{ purchases { id shopperId number receipt shopper { id } } }")
    assert result.errors is None
    assert result.data == {
        "purchases": [
            {
                "id": str(purchase.pk),
                "shopperId": str(purchase.shopper_id),
                "number": str(purchase.number),
                "receipt": str(purchase.receipt),
                "shopper": {"id": str(purchase.shopper_id)},
            }
        ]
    }


def test_other_layouts_to_field_keys_and_sequence_values_are_strings(purchase):
    ticket = Ticket.objects.create(title="t")
    Parcel.objects.create(purchase=purchase, ticket=ticket)
    customer = Customer.objects.create()
    result = execute(
        "{ parcels { purchaseId ticketId ticket { id publicId } } customers { number } }"
    )
    assert result.errors is None
    assert result.data == {
        "parcels": [
            {
                "purchaseId": str(purchase.number),
                "ticketId": str(ticket.public_id),
                "ticket": {"id": str(ticket.pk), "publicId": str(ticket.public_id)},
            }
        ],
        "customers": [{"number": str(customer.number)}],
    }


def test_the_schema_types_our_fields_with_the_scalars():
    sdl = schema.as_str()
    for line in (
        "  id: SnowflakeID!\n  shopper: ShopperType!\n  shopperId: SnowflakeID!",
        "number: OrderNumber!",
        "purchaseId: OrderNumber!",
        "ticketId: SnowflakeID\n",
        "number: SequenceValue!",
        "scalar SnowflakeID",
        "number: OrderNumberComparisonFilterLookup",
    ):
        assert line in sdl, line


def test_filters_compare_ids_and_order_numbers_as_integers(purchase):
    later = Purchase.objects.create(shopper=purchase.shopper)
    text = "query($f: PurchaseFilter) { purchases(filters: $f) { id } }"
    exact = execute(text, {"f": {"number": {"exact": str(later.number)}}})
    assert exact.data == {"purchases": [{"id": str(later.pk)}]}
    after = execute(text, {"f": {"id": {"gt": str(purchase.pk)}}})
    assert after.data == {"purchases": [{"id": str(later.pk)}]}
    both = execute(
        text, {"f": {"receipt": {"inList": [str(later.receipt), str(purchase.receipt)]}}}
    )
    assert {row["id"] for row in both.data["purchases"]} == {str(purchase.pk), str(later.pk)}


def test_a_mutation_takes_a_foreign_key_to_an_order_number_as_a_string(purchase):
    ticket = Ticket.objects.create(title="t")
    text = "mutation($d: ParcelInput!) { createParcel(data: $d) { id purchaseId ticketId } }"
    result = execute(
        text, {"d": {"purchaseId": str(purchase.number), "ticketId": str(ticket.public_id)}}
    )
    assert result.errors is None, result.errors
    parcel = Parcel.objects.get()
    assert parcel.purchase_id == purchase.number and parcel.ticket_id == ticket.public_id
    assert result.data == {
        "createParcel": {
            "id": str(parcel.pk),
            "purchaseId": str(purchase.number),
            "ticketId": str(ticket.public_id),
        }
    }


@pytest.mark.parametrize("value, message", BAD_IDS)
def test_bad_ids_are_refused_with_a_message_naming_the_problem(value, message):
    text = "query($f: PurchaseFilter) { purchases(filters: $f) { id } }"
    result = execute(text, {"f": {"id": {"exact": value}}})
    assert result.data is None
    (error,) = result.errors
    assert message in error.message, error.message


def test_an_order_number_sent_as_a_json_number_is_refused_not_saved(purchase):
    text = "mutation($d: ParcelInput!) { createParcel(data: $d) { id } }"
    result = execute(text, {"d": {"purchaseId": purchase.number}})
    assert "(and maybe its shard). Send order numbers as strings" in result.errors[0].message
    assert Parcel.objects.count() == 0


def test_sequence_values_as_arguments_and_literals():
    customer = Customer.objects.create()
    found = execute(f'{{ customer(number: "{customer.number}") {{ id }} }}')
    assert found.data == {"customer": {"id": str(customer.pk)}}
    assert execute(f"{{ customer(number: {customer.number}) {{ id }} }}").data == found.data
    refused = execute('{ customer(number: "1e3") { id } }')
    assert "is not a sequence value: only the digits 0-9" in refused.errors[0].message


def test_a_mistyped_check_digit_is_refused_by_the_filter(settings):
    settings.SNOWID_ORDER_CHECK_DIGIT = "damm"
    settings.SNOWID_ORDER_SEQUENCE_DIGITS = 4
    receipt = str(Purchase.objects.create(shopper=Shopper.objects.create(name="b")).receipt)
    mistyped = receipt[:-4] + str((int(receipt[-4]) + 3) % 10) + receipt[-3:]
    text = "query($r: OrderNumber) { purchases(filters: {receipt: {exact: $r}}) { receipt } }"
    assert execute(text, {"r": receipt}).data == {"purchases": [{"receipt": receipt}]}
    refused = execute(text, {"r": mistyped})
    assert "fails its check digit" in refused.errors[0].message


def test_the_view_answers_strings_to_strawberry_djangos_test_client(purchase):
    from strawberry_django.test.client import TestClient

    response = TestClient("/strawberry/").query(
        "query($n: OrderNumber) { purchases(filters: {number: {exact: $n}}) { id number } }",
        variables={"n": str(purchase.number)},
    )
    assert response.errors is None
    assert response.data == {
        "purchases": [{"id": str(purchase.pk), "number": str(purchase.number)}]
    }


def test_relay_nodes_keep_their_global_ids(purchase):
    @strawberry_django.type(Shopper)
    class ShopperNode(relay.Node):
        name: strawberry.auto

    @strawberry.type
    class Query:
        node: relay.Node = strawberry_django.node()

    relay_schema = strawberry.Schema(query=Query, types=[ShopperNode])
    global_id = relay.to_base64("ShopperNode", purchase.shopper_id)
    result = relay_schema.execute_sync(
        f'{{ node(id: "{global_id}") {{ id ... on ShopperNode {{ name }} }} }}'
    )
    assert result.errors is None, result.errors
    assert result.data == {"node": {"id": global_id, "name": "ada"}}


def test_global_ids_replace_snowflake_pks_where_the_project_asks(settings):
    settings.STRAWBERRY_DJANGO = {"MAP_AUTO_ID_AS_GLOBAL_ID": True}

    @strawberry_django.type(Shopper)
    class GlobalShopper:
        id: strawberry.auto

    @strawberry.type
    class Query:
        ok: bool = True

    sdl = strawberry.Schema(query=Query, types=[GlobalShopper]).as_str()
    assert "type GlobalShopper {\n  id: ID!\n}" in sdl
