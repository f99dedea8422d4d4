"""Django REST framework: order numbers travel as strings, as ids do, in every shape.

Order numbers are above 2**53 (a binary one is about 6.6e16, a decimal one 2.5e18): sent
as JSON numbers, browsers change their last digits, and with them the shard.
"""

from __future__ import annotations

import json

import pytest
from django.test import override_settings
from rest_framework.schemas.openapi import AutoSchema

from django_snowid.drf import ID_PATTERN, OrderNumberSerializerField, SnowflakeAutoSchema
from tests.testapp.api import (
    LinkedPurchaseSerializer,
    ParcelSerializer,
    PurchaseSerializer,
    TagSerializer,
)
from tests.testapp.models import Parcel, Purchase, Shopper, Ticket

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("database_orders")]

STRING_ID = {"type": "string", "pattern": ID_PATTERN}


@pytest.fixture
def purchase():
    return Purchase.objects.create(shopper=Shopper.objects.create(name="ada"))


def post(client, url: str, data: dict):
    return client.post(url, json.dumps(data), content_type="application/json")


def test_order_numbers_of_both_packings_come_back_as_strings(client, purchase):
    expected = {
        "id": str(purchase.pk),
        "shopper": str(purchase.shopper_id),
        "number": str(purchase.number),
        "receipt": str(purchase.receipt),
    }
    assert purchase.number > 2**53 and purchase.receipt > 2**53  # the case that matters
    assert client.get(f"/api/purchases/{purchase.pk}/").json() == expected
    assert client.get("/api/purchases/").json() == [expected]


def test_foreign_keys_to_order_numbers_and_snowflake_columns_are_strings(client, purchase):
    ticket = Ticket.objects.create(title="t")
    parcel = Parcel.objects.create(purchase=purchase, ticket=ticket)
    flat = client.get(f"/api/parcels/{parcel.pk}/").json()
    assert flat == {
        "id": str(parcel.pk),
        "purchase": str(purchase.number),
        "ticket": str(ticket.public_id),
    }
    (nested,) = client.get("/api/nested-parcels/").json()
    assert nested["purchase"] == {
        "id": str(purchase.pk),
        "shopper": str(purchase.shopper_id),
        "number": str(purchase.number),
        "receipt": str(purchase.receipt),
    }
    assert nested["ticket"]["public_id"] == str(ticket.public_id)
    assert nested["ticket"]["id"] == str(ticket.pk)


def test_hyperlinked_serializers_write_strings_too(client, purchase):
    parcel = Parcel.objects.create(purchase=purchase)
    body = client.get(f"/api/linked-purchases/{purchase.pk}/").json()
    assert body["id"] == str(purchase.pk)
    assert body["number"] == str(purchase.number) and body["receipt"] == str(purchase.receipt)
    assert body["url"].endswith(f"/api/purchases/{purchase.pk}/")
    assert body["shopper"].endswith(f"/api/shoppers/{purchase.shopper_id}/")
    assert [url.rsplit("/", 2)[-2] for url in body["parcels"]] == [str(parcel.pk)]


def test_posting_an_order_number_as_a_string_links_the_row(client, purchase):
    response = post(client, "/api/parcels/", {"purchase": str(purchase.number)})
    assert response.status_code == 201, response.content
    parcel = Parcel.objects.get()
    assert parcel.purchase_id == purchase.number
    assert response.json()["purchase"] == str(purchase.number)


@pytest.mark.parametrize(
    "value, message",
    [
        ("abc", "is not an order number: only the digits 0-9"),
        ([1], "send it as a string of digits"),
        (1.5, "order numbers are integers"),
        (True, "send it as a string of digits"),
        ("7" * 5000, "5,000 digits, at most 19"),
        (2**60, "already changed its last digits"),
        ("12345", "not a yyMMddHHmmss date-time"),
        ("", "This field may not be null"),
    ],
)
def test_bad_order_numbers_get_a_400_that_names_the_problem(client, purchase, value, message):
    response = post(client, "/api/parcels/", {"purchase": value})
    assert response.status_code == 400, response.content
    errors = response.json()
    assert list(errors) == ["purchase"]
    assert message in errors["purchase"][0]
    assert Parcel.objects.count() == 0


def test_spaces_around_an_order_number_are_refused_as_everywhere(client, purchase):
    response = post(client, "/api/parcels/", {"purchase": f" {purchase.number}"})
    assert response.status_code == 400
    assert "only the digits 0-9" in response.json()["purchase"][0]


def test_the_exact_number_sent_as_a_json_number_is_refused_not_rounded(client, purchase):
    response = post(client, "/api/parcels/", {"purchase": purchase.number})
    assert response.status_code == 400 and "2**53" in response.json()["purchase"][0]


def test_a_number_below_2_to_the_53_is_accepted_as_a_json_number():
    from django_snowid.core.order_format import OrderNumberFormat

    small = OrderNumberFormat(sequence_bits=3, shard_bits=4)  # 47 bits
    field = OrderNumberSerializerField(format=small)
    value = small.compose(small.local_second_of_stem(250413120000), 1, 12)
    assert value < 2**53
    assert field.run_validation(value) == value
    assert field.run_validation(str(value)) == value
    assert field.to_representation(value) == str(value)


def test_drf_autoschema_types_order_numbers_as_strings_with_a_pattern():
    schema = AutoSchema()
    purchase = schema.map_serializer(PurchaseSerializer())["properties"]
    assert purchase["number"] == {**STRING_ID, "readOnly": True}
    assert purchase["receipt"] == {**STRING_ID, "readOnly": True}
    assert purchase["shopper"] == STRING_ID
    parcel = schema.map_serializer(ParcelSerializer())["properties"]
    assert parcel["purchase"] == STRING_ID
    assert parcel["ticket"] == {**STRING_ID, "nullable": True}
    linked = schema.map_serializer(LinkedPurchaseSerializer())["properties"]
    assert linked["number"] == {**STRING_ID, "readOnly": True}


def test_snowflake_autoschema_gives_many_to_many_items_the_pattern():
    products = SnowflakeAutoSchema().map_serializer(TagSerializer())["properties"]["products"]
    assert products == {"type": "array", "items": STRING_ID}
    # DRF's own AutoSchema writes a pattern at the top level only.
    plain = AutoSchema().map_serializer(TagSerializer())["properties"]["products"]
    assert plain["items"] == {"type": "string"}


def spectacular_schema() -> dict:
    from drf_spectacular.generators import SchemaGenerator

    from tests.testapp.api import router

    spectacular = {"DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema"}
    with override_settings(REST_FRAMEWORK=spectacular):
        return SchemaGenerator(patterns=router.urls).get_schema(request=None, public=True)


def test_drf_spectacular_types_order_numbers_and_path_ids_as_strings():
    schema = spectacular_schema()
    components = schema["components"]["schemas"]
    purchase = components["Purchase"]["properties"]
    for name in ("id", "shopper", "number", "receipt"):
        assert purchase[name]["type"] == "string", (name, purchase[name])
        assert purchase[name]["pattern"] == ID_PATTERN, (name, purchase[name])
    parcel = components["Parcel"]["properties"]
    assert parcel["purchase"]["type"] == "string" and parcel["purchase"]["pattern"] == ID_PATTERN
    assert parcel["ticket"]["type"] == "string" and parcel["ticket"]["pattern"] == ID_PATTERN
    tag = components["Tag"]["properties"]
    assert tag["products"]["items"] == STRING_ID
    # Nested (depth): each related model its own component, strings inside.
    nested = components["NestedParcel"]["properties"]
    assert nested["purchase"]["allOf"] == [{"$ref": "#/components/schemas/NestedPurchase"}]
    assert components["NestedPurchase"]["properties"]["number"]["pattern"] == ID_PATTERN
    assert components["NestedTicket"]["properties"]["public_id"]["pattern"] == ID_PATTERN
    (parameter,) = schema["paths"]["/purchases/{id}/"]["get"]["parameters"]
    assert parameter["schema"] == STRING_ID


def test_drf_spectacular_descriptions_are_the_users_not_ours():
    """Our serializer classes' and mixins' docs must not become the API's descriptions."""
    components = spectacular_schema()["components"]["schemas"]
    described = {name: c["description"] for name, c in components.items() if "description" in c}
    assert described == {}, described


@pytest.mark.parametrize("format_options", [{"conceal": True}, {"conceal": False}], ids=str)
def test_a_serializer_field_of_a_concealing_format_serves_every_request(settings, format_options):
    """DRF deep-copies a serializer's declared fields for each instance, their arguments
    with them: a format with a key schedule must survive it, request after request."""
    from rest_framework import serializers
    from rest_framework.decorators import api_view
    from rest_framework.response import Response
    from rest_framework.test import APIRequestFactory

    from django_snowid.orders.formats import build_format

    settings.SNOWID_ORDER_KEY = "a-key-for-the-drf-serializer-field-0123456789"
    fmt = build_format(format_options)
    number = fmt.compose(1_900_000_000, 42, 7)

    class LookupSerializer(serializers.Serializer):
        number = OrderNumberSerializerField(format=fmt)

    @api_view(["POST"])
    def lookup(request):
        serializer = LookupSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        found = fmt.decode(serializer.validated_data["number"])
        return Response({"number": str(found.value), "sequence": found.sequence})

    factory = APIRequestFactory()
    for _ in range(2):
        response = lookup(factory.post("/", {"number": str(number)}, format="json"))
        assert response.status_code == 200, response.data
        assert response.data == {"number": str(number), "sequence": 42}
    assert LookupSerializer().fields["number"].format is fmt
