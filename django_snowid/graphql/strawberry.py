"""strawberry-graphql-django: importing this module adds our fields to its type map (by
exact class) and filters' map, and their scalars to strawberry's scalar registry."""

from __future__ import annotations

from typing import Any, NewType

import strawberry
from strawberry import relay
from strawberry.schema.types.scalar import DEFAULT_SCALAR_REGISTRY
from strawberry_django.fields.filter_types import ComparisonFilterLookup, type_filter_map
from strawberry_django.fields.types import field_type_map, relay_field_type_map

from ..fields import SnowflakeAutoField
from ..sequences.fields import SequenceTextField
from .scalars import FIELD_SCALARS, ORDER_NUMBER_SCALAR, SEQUENCE_VALUE_SCALAR, SNOWFLAKE_ID_SCALAR

__all__ = ["OrderNumber", "SequenceValue", "SnowflakeID"]

SnowflakeID = NewType("SnowflakeID", int)
OrderNumber = NewType("OrderNumber", int)
SequenceValue = NewType("SequenceValue", int)
_TYPES: dict[str, Any] = {
    SNOWFLAKE_ID_SCALAR.name: SnowflakeID,
    ORDER_NUMBER_SCALAR.name: OrderNumber,
    SEQUENCE_VALUE_SCALAR.name: SequenceValue,
}

for _spec in (SNOWFLAKE_ID_SCALAR, ORDER_NUMBER_SCALAR, SEQUENCE_VALUE_SCALAR):
    DEFAULT_SCALAR_REGISTRY[_TYPES[_spec.name]] = strawberry.scalar(
        name=_spec.name,
        description=_spec.description,
        serialize=_spec.serialize,
        parse_value=_spec.parse_value,
    )
    type_filter_map[_TYPES[_spec.name]] = ComparisonFilterLookup
for _field_class, _spec in FIELD_SCALARS:
    field_type_map[_field_class] = _TYPES[_spec.name]
field_type_map[SequenceTextField] = str
relay_field_type_map[SnowflakeAutoField] = relay.GlobalID
