"""The field a model's pages are ordered by: a Snowflake field, indexed, never null."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import models

from ..core.layout import Layout
from ..exceptions import CursorKeyError
from ..fields import OrderNumberField, SnowflakeAutoField, SnowflakeField

__all__ = ["CursorKey", "cursor_key"]


@dataclass(frozen=True)
class CursorKey:
    """The ordering column of a model's pages and the layout that maps times to ids."""

    name: str
    layout: Layout


def _indexed(model: type[models.Model], field: Any) -> bool:
    if field.primary_key or field.unique or field.db_index:
        return True
    indexes = [*model._meta.indexes, *model._meta.constraints]
    return any(list(getattr(index, "fields", ()))[:1] == [field.name] for index in indexes)


def cursor_key(model: type[models.Model], name: str | None = None) -> CursorKey:
    """The key of ``model``'s pages: the field ``name`` (``None``: the primary key), or
    :class:`CursorKeyError` saying why it cannot order pages."""
    field = model._meta.pk if name is None else model._meta.get_field(name)
    label = f"{model._meta.label}.{field.name}"
    if isinstance(field, OrderNumberField):
        raise CursorKeyError(
            f"{label} is an order number: its numbers are not in the order they were issued "
            "within a second (concealed ones are shuffled), so pages by it would skip or "
            "repeat rows. Page by the model's Snowflake id instead."
        )
    if not isinstance(field, (SnowflakeAutoField, SnowflakeField)):
        raise CursorKeyError(
            f"{label} is a {type(field).__name__}, not a Snowflake field: only ids whose "
            "layout maps times to ids can bound pages by time and by settled id."
        )
    if field.null or not _indexed(model, field):
        raise CursorKeyError(
            f"{label} must be NOT NULL and unique or indexed (its first column) to order "
            "pages: without an index every page scans the table."
        )
    return CursorKey(name=field.attname, layout=field.layout)
