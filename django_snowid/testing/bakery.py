"""model_bakery leaves our fields empty: they issue their own values on INSERT."""

from __future__ import annotations

from django.db.models import Field
from model_bakery import generators

from .. import inventory
from ..fields import OrderNumberField, SnowflakeAutoField, SnowflakeField

__all__ = ["issued_on_insert", "register"]


def issued_on_insert() -> None:
    """No value: the field issues its own on INSERT."""
    return None


def register(*field_classes: type[Field]) -> None:
    """Give model_bakery :func:`issued_on_insert` for our field classes, the classes of
    the installed models' fields of ours, and ``field_classes``."""
    ours: set[type[Field]] = {SnowflakeField, SnowflakeAutoField, OrderNumberField}
    ours.update(type(field) for field in inventory.fields())
    for field_class in ours.union(field_classes):
        generators.add(field_class, issued_on_insert)  # type: ignore[arg-type]
