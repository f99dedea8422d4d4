"""An existing column that new numbers continue above (``snowid_recover --above``,
``snowid_sequences --start-above``): named ``app_label.Model.field``, an integer column,
read on every database that can hold its rows."""

from __future__ import annotations

from django.apps import apps
from django.db import models

from ..core.echo import shown
from ..exceptions import AdoptionError
from ..inventory import column_max

__all__ = ["integer_column", "largest_value"]

INTEGER_TYPES = frozenset(
    {
        "AutoField",
        "BigAutoField",
        "SmallAutoField",
        "IntegerField",
        "BigIntegerField",
        "SmallIntegerField",
        "PositiveIntegerField",
        "PositiveBigIntegerField",
        "PositiveSmallIntegerField",
    }
)


def integer_column(label: str) -> models.Field:
    """The field ``app_label.Model.field``, whose column holds whole numbers. Raises
    :class:`AdoptionError` naming what is wrong."""
    model_label, _, name = label.rpartition(".")
    try:
        model = apps.get_model(model_label)
    except (LookupError, ValueError):
        raise AdoptionError(
            f"{shown(label)} names no column of an installed model (app_label.Model.field)."
        ) from None
    try:
        field = model._meta.get_field(name)
    except Exception:  # FieldDoesNotExist
        raise AdoptionError(f"{model._meta.label} has no field {shown(name)}.") from None
    internal = field.get_internal_type()
    whole = internal in INTEGER_TYPES or (
        internal == "DecimalField" and getattr(field, "decimal_places", None) == 0
    )
    if not whole or not getattr(field, "concrete", False) or field.is_relation:
        raise AdoptionError(
            f"{model._meta.label}.{name} is a {type(field).__name__}, not a column of whole "
            "numbers to continue above."
        )
    return field


def largest_value(field: models.Field, *, using: str | None = None) -> int | None:
    """The largest value of ``field``'s column on ``using``, or on every database that
    can hold its rows (the primary, or every shard)."""
    from ..orders.recovery import databases_for

    found = [
        column_max(field, using=db) for db in ([using] if using else databases_for(field.model))
    ]
    values = [int(v) for v in found if v is not None]
    return max(values, default=None)
