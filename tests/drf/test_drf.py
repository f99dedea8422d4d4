"""Django REST framework: ids and foreign keys travel as strings, bad ids are 400s."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings
from rest_framework.exceptions import ValidationError
from rest_framework.schemas.openapi import AutoSchema

from django_snowid.drf import ID_PATTERN, SnowflakeIdField
from django_snowid.settings_layouts import get_layout
from tests.testapp.api import (
    ProductSerializer,
    ReviewSerializer,
    TagSerializer,
    TicketLookupSerializer,
    TicketSerializer,
)
from tests.testapp.models import Product, Review, Tag, Ticket

pytestmark = pytest.mark.django_db

BAD_IDS = {
    "letters": "abc",
    "negative": -1,
    "negative string": "-1",
    "past 63 bits": 2**63,
    "past 63 bits as string": str(2**63),
    "float": 1.5,
    "integral float": 2.0**60,
    "number above 2**53": 2**53 + 1,
    "boolean": True,
    "object": {"id": 1},
    "5,000 digits": "7" * 5000,
    "empty": "",
}


def post(client, url: str, data: dict):
    return client.post(url, json.dumps(data), content_type="application/json")


def test_list_and_retrieve_write_ids_as_strings(client):
    products = [Product.objects.create(name=f"p{i}") for i in range(3)]
    body = client.get("/api/products/").json()
    assert [row["id"] for row in body] == [str(p.pk) for p in products]
    assert all(p.pk > 2**53 for p in products)  # the case that matters
    one = client.get(f"/api/products/{products[1].pk}/").json()
    assert one["id"] == str(products[1].pk)
    created = get_layout().decode(products[1].pk).time
    assert one["created"] == created.isoformat().replace("+00:00", "Z")


def test_created_is_utc_with_a_z_whatever_the_time_zone(client, settings):
    """The time an id carries, as its decoding shows it: UTC with a "Z", not the site's
    local time (DRF's DateTimeField writes the current zone, "+01:00" in Paris)."""
    settings.TIME_ZONE = "Europe/Paris"
    product = Product.objects.create(name="tea")
    body = client.get(f"/api/products/{product.pk}/").json()
    created = get_layout().decode(product.pk).time
    assert body["created"].endswith("Z"), body["created"]
    assert body["created"] == created.isoformat().replace("+00:00", "Z")


def test_foreign_keys_come_back_as_strings_flat_and_nested(client):
    product = Product.objects.create(name="tea")
    review = Review.objects.create(product=product, text="good")
    flat = client.get(f"/api/reviews/{review.pk}/").json()
    assert flat == {"id": str(review.pk), "product": str(product.pk), "text": "good"}
    nested = client.get("/api/nested-reviews/").json()
    assert nested[0]["id"] == str(review.pk)
    assert nested[0]["product"]["id"] == str(product.pk)


def test_many_to_many_ids_are_strings(client):
    products = [Product.objects.create(name=n) for n in "ab"]
    tag = Tag.objects.create(name="green")
    tag.products.set(products)
    body = client.get(f"/api/tags/{tag.pk}/").json()
    assert body["id"] == str(tag.pk)
    assert sorted(body["products"]) == sorted(str(p.pk) for p in products)


def test_posting_a_string_id_creates(client):
    product = Product.objects.create(name="tea")
    response = post(client, "/api/reviews/", {"product": str(product.pk), "text": "ok"})
    assert response.status_code == 201, response.content
    review = Review.objects.get()
    assert review.product_id == product.pk
    assert response.json() == {"id": str(review.pk), "product": str(product.pk), "text": "ok"}


def test_a_safe_json_number_is_accepted():
    ticket = Ticket.objects.create(title="t")  # js53: ids below 2**53
    serializer = TicketLookupSerializer(data={"ticket": ticket.pk})
    assert serializer.is_valid(), serializer.errors
    assert serializer.validated_data["ticket"] == ticket.pk


@pytest.mark.parametrize("value", BAD_IDS.values(), ids=BAD_IDS.keys())
def test_bad_foreign_keys_get_a_400_with_a_field_error(client, value):
    Product.objects.create(name="tea")
    response = post(client, "/api/reviews/", {"product": value, "text": "x"})
    assert response.status_code == 400, response.content
    assert list(response.json()) == ["product"]
    assert Review.objects.count() == 0


@pytest.mark.parametrize(
    "value, message",
    [
        ("abc", "is not an id: only the digits 0-9"),
        ({"id": 1}, "send the id as a string of digits"),
        (-1, "out of range"),
        (2**63, "above 2**53 - 1"),
        (1.5, "ids are integers"),
        (2**53 + 1, "already changed its last digits"),
        (str(2**53), "out of range for layout 'js'"),
        ("1" * 5000, "5,000 digits, at most 19"),
    ],
)
def test_bad_ids_name_the_problem(value, message):
    serializer = TicketLookupSerializer(data={"ticket": value})
    assert not serializer.is_valid()
    assert message in str(serializer.errors["ticket"][0])


def test_unsafe_numbers_can_be_allowed_for_trusted_callers():
    field = SnowflakeIdField(allow_unsafe_numbers=True)
    assert field.run_validation(2**60) == 2**60


def test_drf_autoschema_says_string_with_a_pattern():
    schema = AutoSchema()
    review = schema.map_serializer(ReviewSerializer())["properties"]
    assert review["id"] == {"type": "string", "pattern": ID_PATTERN, "readOnly": True}
    assert review["product"] == {"type": "string", "pattern": ID_PATTERN}
    tag = schema.map_serializer(TagSerializer())["properties"]
    assert tag["products"]["items"]["type"] == "string"
    ticket = schema.map_serializer(TicketSerializer())["properties"]
    assert ticket["public_id"]["type"] == "string"
    assert "maximum" not in ticket["public_id"]
    product = schema.map_serializer(ProductSerializer())["properties"]
    assert product["created"]["format"] == "date-time"


def test_drf_spectacular_says_string_with_a_pattern():
    from drf_spectacular.generators import SchemaGenerator

    from tests.testapp.api import router

    spectacular = {"DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema"}
    with override_settings(REST_FRAMEWORK=spectacular):
        schema = SchemaGenerator(patterns=router.urls).get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    review = components["Review"]["properties"]
    assert review["id"]["type"] == "string" and review["id"]["pattern"] == ID_PATTERN
    assert review["product"]["type"] == "string"
    assert review["product"]["pattern"] == ID_PATTERN


TYPED = [" 42", "42 ", "\u00a042", "\u0664\u0662", "+42", "0" * 20 + "42", "0042", "42"]


@pytest.mark.parametrize("text", TYPED)
def test_strings_are_judged_by_the_one_parser_of_typed_numbers(text):
    from django_snowid.core.digits import parse_digits
    from django_snowid.exceptions import InvalidId

    try:
        expected: int | None = parse_digits(text)
    except InvalidId:
        expected = None
    for serializer_field in (SnowflakeIdField(), TicketLookupSerializer().fields["ticket"]):
        try:
            got: int | None = serializer_field.run_validation(text)
        except ValidationError as exc:
            assert exc.detail[0].code in ("invalid", "too_long"), (text, exc.detail)
            got = None
        assert got == expected, text
