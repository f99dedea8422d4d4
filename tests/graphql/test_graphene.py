"""graphene-django: ids, order numbers, sequence values and foreign keys to them travel as
strings; what a client sends for them is refused as the REST fields refuse it."""

from __future__ import annotations

import graphene
import pytest
from graphene.test import Client
from graphene_django import DjangoObjectType
from graphene_django.utils.testing import graphql_query

from tests.graphql.cases import BAD_IDS
from tests.testapp.graphene_schema import schema
from tests.testapp.models import Customer, Parcel, Purchase, Shopper, Ticket

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("database_orders")]


def query(client, text: str, variables: dict | None = None) -> dict:
    """The JSON body the graphene view answers ``text`` with."""
    response = graphql_query(text, variables=variables, client=client, graphql_url="/graphene/")
    return response.json()


@pytest.fixture
def purchase():
    return Purchase.objects.create(shopper=Shopper.objects.create(name="ada"))


def test_order_numbers_ids_and_foreign_keys_are_strings(client, purchase):
    assert purchase.number > 2**53 and purchase.receipt > 2**53  # the case that matters
    body = query(client, "{ purchases { id number receipt shopper { id name } } }")
    assert body == {
        "data": {
            "purchases": [
                {
                    "id": str(purchase.pk),
                    "number": str(purchase.number),
                    "receipt": str(purchase.receipt),
                    "shopper": {"id": str(purchase.shopper_id), "name": "ada"},
                }
            ]
        }
    }


def test_other_layouts_to_field_keys_and_sequence_values_are_strings(client, purchase):
    ticket = Ticket.objects.create(title="t")  # a js53 pk and a datacenter-layout column
    Parcel.objects.create(purchase=purchase, ticket=ticket)
    Parcel.objects.create(purchase=purchase)
    customer = Customer.objects.create()
    body = query(
        client,
        "{ parcels { purchase { number } ticket { id publicId } }  customers { number } }",
    )
    assert body["data"]["parcels"] == [
        {
            "purchase": {"number": str(purchase.number)},
            "ticket": {"id": str(ticket.pk), "publicId": str(ticket.public_id)},
        },
        {"purchase": {"number": str(purchase.number)}, "ticket": None},
    ]
    assert body["data"]["customers"] == [{"number": str(customer.number)}]


def test_the_schema_types_our_fields_with_the_scalars():
    sdl = str(schema)
    for line in (
        "id: SnowflakeID!",
        "number: OrderNumber!",
        "receipt: OrderNumber!",
        "publicId: SnowflakeID!",
        "number: SequenceValue!",
        "ticket: TicketType\n",
        "scalar SnowflakeID",
    ):
        assert line in sdl, line
    assert "BigInt" not in sdl


def test_arguments_take_strings_and_safe_integers(client, purchase):
    ticket = Ticket.objects.create(title="js53")
    customer = Customer.objects.create()
    text = (
        "query($n: OrderNumber, $t: SnowflakeID!, $c: SequenceValue!) {"
        " purchase(number: $n) { id } ticket(id: $t) { title } customer(number: $c) { id } }"
    )
    variables = {"n": str(purchase.number), "t": ticket.pk, "c": customer.number}
    assert ticket.pk < 2**53  # a js53 id may travel as a JSON number
    body = query(client, text, variables)
    assert body == {
        "data": {
            "purchase": {"id": str(purchase.pk)},
            "ticket": {"title": "js53"},
            "customer": {"id": str(customer.pk)},
        }
    }
    literal = query(client, f'{{ shopper(id: "{purchase.shopper_id}") {{ name }} }}')
    assert literal == {"data": {"shopper": {"name": "ada"}}}


@pytest.mark.parametrize("value, message", BAD_IDS)
def test_bad_ids_are_refused_with_a_message_naming_the_problem(client, value, message):
    body = query(client, "query($id: SnowflakeID!) { shopper(id: $id) { id } }", {"id": value})
    assert "data" not in body or body["data"] is None
    (error,) = body["errors"]
    assert message in error["message"], error


def test_an_order_number_sent_as_a_json_number_is_refused_not_rounded(client, purchase):
    body = query(
        client, "query($n: OrderNumber) { purchase(number: $n) { id } }", {"n": purchase.number}
    )
    (error,) = body["errors"]
    assert "(and maybe its shard). Send order numbers as strings" in error["message"]


def test_literals_are_judged_as_variables_are(client):
    body = query(client, f"{{ shopper(id: {2**60}) {{ id }} }}")
    assert "already changed its last digits" in body["errors"][0]["message"]
    body = query(client, "{ shopper(id: 1.5) { id } }")
    assert "ids are integers" in body["errors"][0]["message"]


def test_a_mistyped_check_digit_is_refused_by_the_lookup(client, settings):
    settings.SNOWID_ORDER_CHECK_DIGIT = "damm"
    settings.SNOWID_ORDER_SEQUENCE_DIGITS = 4
    receipt = Purchase.objects.create(shopper=Shopper.objects.create(name="b")).receipt
    text = str(receipt)
    mistyped = text[:-4] + str((int(text[-4]) + 3) % 10) + text[-3:]
    found = query(
        client, "query($r: OrderNumber) { purchase(receipt: $r) { receipt } }", {"r": text}
    )
    assert found == {"data": {"purchase": {"receipt": text}}}
    body = query(client, "query($r: OrderNumber) { purchase(receipt: $r) { id } }", {"r": mistyped})
    assert "fails its check digit" in body["errors"][0]["message"]


def test_graphenes_own_client_reads_the_same_strings(purchase):
    result = Client(schema).execute("{ purchases { id number } }")
    assert result == {
        "data": {"purchases": [{"id": str(purchase.pk), "number": str(purchase.number)}]}
    }


def test_relay_nodes_keep_their_global_ids(purchase):
    class ShopperNode(DjangoObjectType):
        class Meta:
            model = Shopper
            fields = ["id", "name"]
            interfaces = (graphene.relay.Node,)

    class Query(graphene.ObjectType):
        node = graphene.relay.Node.Field()

    relay_schema = graphene.Schema(query=Query, types=[ShopperNode])
    global_id = graphene.relay.Node.to_global_id("ShopperNode", purchase.shopper_id)
    result = relay_schema.execute(
        f'{{ node(id: "{global_id}") {{ id ... on ShopperNode {{ name }} }} }}'
    )
    assert result.errors is None
    assert result.data == {"node": {"id": global_id, "name": "ada"}}
    assert "id: ID!" in str(relay_schema)


def test_a_serializer_mutation_of_our_drf_serializer_validates_as_drf_does(purchase):
    """graphene-django's DRF mutations type our serializer fields as ``String``: exact,
    and what they refuse is refused with their messages (the format's, the check digit's)."""
    from graphene_django.rest_framework.mutation import SerializerMutation

    from tests.testapp.api import ParcelSerializer
    from tests.testapp.graphene_schema import Query

    class CreateParcel(SerializerMutation):
        class Meta:
            serializer_class = ParcelSerializer
            model_operations = ["create"]

    class Mutation(graphene.ObjectType):
        create_parcel = CreateParcel.Field()

    mutations = graphene.Schema(query=Query, mutation=Mutation)
    text = (
        "mutation($p: String!) { createParcel(input: {purchase: $p}) "
        "{ id errors { field messages } } }"
    )
    made = mutations.execute(text, variables={"p": str(purchase.number)})
    parcel = Parcel.objects.get()
    assert parcel.purchase_id == purchase.number
    assert made.data == {"createParcel": {"id": str(parcel.pk), "errors": None}}
    refused = mutations.execute(text, variables={"p": "12345"})
    (error,) = refused.data["createParcel"]["errors"]
    assert error["field"] == "purchase" and "not a yyMMddHHmmss date-time" in error["messages"][0]
    assert Parcel.objects.count() == 1
