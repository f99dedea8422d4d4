"""graphene-django: importing this module registers our fields' scalars with
``convert_django_field``, for every ``DjangoObjectType`` made afterwards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import graphene
from django.db import models
from graphene_django.converter import convert_django_field, get_django_field_description

from .scalars import FIELD_SCALARS, ORDER_NUMBER_SCALAR, SEQUENCE_VALUE_SCALAR, SNOWFLAKE_ID_SCALAR
from .scalars import Scalar as _Spec

__all__ = ["OrderNumber", "SequenceValue", "SnowflakeID"]


def _scalar(spec: _Spec) -> type[graphene.Scalar]:
    meta = type("Meta", (), {"name": spec.name, "description": spec.description})
    return type(
        spec.name,
        (graphene.Scalar,),
        {
            "Meta": meta,
            "__module__": __name__,
            "serialize": staticmethod(spec.serialize),
            "parse_value": staticmethod(spec.parse_value),
        },
    )


SnowflakeID = _scalar(SNOWFLAKE_ID_SCALAR)
OrderNumber = _scalar(ORDER_NUMBER_SCALAR)
SequenceValue = _scalar(SEQUENCE_VALUE_SCALAR)
_CLASSES = {scalar._meta.name: scalar for scalar in (SnowflakeID, OrderNumber, SequenceValue)}


def _converter(scalar: type[graphene.Scalar]) -> Callable[..., Any]:
    def convert(field: models.Field, registry: Any = None) -> Any:
        return scalar(description=get_django_field_description(field), required=not field.null)

    return convert


for _field_class, _spec in FIELD_SCALARS:
    convert_django_field.register(_field_class, _converter(_CLASSES[_spec.name]))
