"""SnowflakeJSONEncoder: integers JavaScript cannot hold come out as strings."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from django.http import JsonResponse

from django_snowid.encoders import MAX_SAFE_INTEGER, SnowflakeJSONEncoder
from tests.testapp.models import Product, Ticket


@pytest.mark.django_db
def test_ids_of_64_bit_layouts_become_strings_and_safe_ones_stay_numbers():
    product = Product.objects.create(name="tea")
    ticket = Ticket.objects.create(title="js53")
    data = {
        "product": product.pk,
        "ticket": ticket.pk,
        "rows": [{"id": product.pk, "count": 3}, (product.pk, -product.pk)],
        "when": datetime(2026, 1, 2, tzinfo=timezone.utc),
    }
    out = json.loads(json.dumps(data, cls=SnowflakeJSONEncoder))
    assert out == {
        "product": str(product.pk),
        "ticket": ticket.pk,
        "rows": [{"id": str(product.pk), "count": 3}, [str(product.pk), str(-product.pk)]],
        "when": "2026-01-02T00:00:00Z",
    }
    response = JsonResponse({"id": product.pk}, encoder=SnowflakeJSONEncoder)
    assert json.loads(response.content) == {"id": str(product.pk)}


@pytest.mark.parametrize(
    "value, expected",
    [
        (MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
        (MAX_SAFE_INTEGER + 1, str(MAX_SAFE_INTEGER + 1)),
        (-MAX_SAFE_INTEGER - 1, str(-MAX_SAFE_INTEGER - 1)),
        (True, True),
        (1.5, 1.5),
    ],
)
def test_the_boundary_is_javascripts_max_safe_integer(value, expected):
    assert json.loads(json.dumps([value], cls=SnowflakeJSONEncoder)) == [expected]
