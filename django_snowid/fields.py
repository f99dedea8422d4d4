"""The model fields, by the path projects import and migrations write them from:
``django_snowid.fields.SnowflakeAutoField`` (a valid ``DEFAULT_AUTO_FIELD``),
``SnowflakeField``, ``OrderNumberField``, ``OrderNumberQuerySet`` and
``assign_order_numbers``. ``redis`` is loaded only when an order-number store needs it.
"""

from __future__ import annotations

from .ids.fields import SnowflakeAutoField, SnowflakeField
from .orders.fields import OrderNumberField
from .orders.queryset import OrderNumberQuerySet, assign_order_numbers

__all__ = [
    "OrderNumberField",
    "OrderNumberQuerySet",
    "SnowflakeAutoField",
    "SnowflakeField",
    "assign_order_numbers",
]
