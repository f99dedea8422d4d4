"""The scalars both GraphQL integrations declare, and the fields each types."""

from __future__ import annotations

import pytest
from django.db import models

from django_snowid.exceptions import InvalidId, InvalidSentValue
from django_snowid.fieldbase import IssuedField
from django_snowid.graphql.scalars import FIELD_SCALARS, ORDER_NUMBER_SCALAR, SNOWFLAKE_ID_SCALAR
from tests.project.test_hostile_input import HOSTILE


def test_values_are_written_as_strings_of_digits():
    assert SNOWFLAKE_ID_SCALAR.serialize(916251175173500942) == "916251175173500942"
    assert ORDER_NUMBER_SCALAR.serialize("68472821646360606") == "68472821646360606"
    with pytest.raises(InvalidId, match="is not an order number"):
        ORDER_NUMBER_SCALAR.serialize("6847e3")
    for value in (True, 1.0, None):
        with pytest.raises(TypeError, match="OrderNumber cannot represent"):
            ORDER_NUMBER_SCALAR.serialize(value)


def concrete_subclasses(base: type) -> set[type]:
    found = set()
    for cls in base.__subclasses__():
        found |= concrete_subclasses(cls)
        if cls.__module__.startswith("django_snowid.") and not cls.__name__.startswith("_"):
            found.add(cls)
    return found


def test_every_integer_field_of_ours_has_a_scalar():
    ours = {c for c in concrete_subclasses(IssuedField) if issubclass(c, models.Field)}
    integers = {c for c in ours if issubclass(c, models.IntegerField | models.BigAutoField)}
    assert {cls for cls, _ in FIELD_SCALARS} == integers
    assert ours - integers == {c for c in ours if issubclass(c, models.CharField)}


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_get_our_refusal(text):
    for scalar in (SNOWFLAKE_ID_SCALAR, ORDER_NUMBER_SCALAR):
        with pytest.raises(InvalidSentValue) as refused:
            scalar.parse_value(text)
        assert refused.value.code in ("invalid", "too_long", "out_of_range"), text
