"""Finding the fields of this app in the installed models, by label ``app.Model.field``."""

from __future__ import annotations

from django.apps import apps
from django.db import models
from django.db.models import Max

from .exceptions import SnowidError
from .fields import SnowflakeAutoField, SnowflakeField
from .orders.field import OrderNumberField

__all__ = ["column_max", "field_label", "get_field", "our_fields"]

OurField = SnowflakeAutoField | SnowflakeField | OrderNumberField


def field_label(field: models.Field) -> str:
    return f"{field.model._meta.label}.{field.name}"


def our_fields(*labels: str) -> list[OurField]:
    """Every Snowflake and order-number field, optionally limited to app or model labels
    (``shop`` or ``shop.Order``), in a stable order."""
    found: list[OurField] = []
    for model in apps.get_models():
        meta = model._meta
        if labels and meta.app_label not in labels and meta.label not in labels:
            continue
        for field in meta.local_concrete_fields:
            if isinstance(field, (SnowflakeAutoField, SnowflakeField, OrderNumberField)):
                found.append(field)
    return sorted(found, key=field_label)


def check_labels(labels: list[str]) -> None:
    """Raise for an app or model label that names nothing installed."""
    for label in labels:
        if "." in label:
            try:
                apps.get_model(label)
            except (LookupError, ValueError):
                raise SnowidError(
                    f"{label!r} is not an installed model (app_label.ModelName)."
                ) from None
        elif label not in {c.label for c in apps.get_app_configs()}:
            raise SnowidError(f"{label!r} is not an installed app label.")


def get_field(label: str) -> OurField:
    """The field called ``app_label.Model.field``."""
    for field in our_fields():
        if field_label(field).lower() == label.lower():
            return field
    known = ", ".join(field_label(f) for f in our_fields()) or "none"
    raise SnowidError(f"{label!r} names no Snowflake or order-number field; known: {known}.")


def column_max(field: models.Field, *, using: str | None = None) -> int | None:
    """The largest value of ``field``'s column: one index lookup on these indexed columns."""
    manager = field.model._base_manager
    if using:
        manager = manager.db_manager(using)
    return manager.aggregate(largest=Max(field.attname))["largest"]
