"""django-import-export: ids, order numbers and relations to them leave as text cells and
come back exactly; a number cell a spreadsheet may have rounded is refused."""

from __future__ import annotations

import functools
import math
from typing import Any, ClassVar

from django.db import models
from import_export import resources, widgets

from .core.digits import parse_digits
from .core.echo import shown
from .core.order_format import OrderNumberFormat
from .core.sent import MAX_BIGINT
from .exceptions import InvalidId
from .fields import OrderNumberField, SnowflakeAutoField, SnowflakeField
from .orders.formats import build_format
from .sequences.fields import SequenceField
from .settings_layouts import get_layout

__all__ = [
    "OrderNumberWidget",
    "SequenceValueWidget",
    "SnowflakeForeignKeyWidget",
    "SnowflakeManyToManyWidget",
    "SnowflakeModelResource",
    "SnowflakeResourceMixin",
    "SnowflakeWidget",
]

#: A spreadsheet keeps 15 significant digits of a number cell: below this, a number is exact.
EXACT_IN_A_NUMBER_CELL = 10**15
_EMPTY = (None, "")
_RETYPE = "Format the column as text and paste the values again (an export writes text)."


def read_cell(value: object, what: str) -> int:
    """A cell's value as an int: text of digits, or a number a spreadsheet held exactly."""
    if isinstance(value, str):
        return _read_text(value, what)
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{value!r} is not {what}: it has a fraction.")
        if abs(value) >= EXACT_IN_A_NUMBER_CELL:
            raise ValueError(
                f"{value!r} came from a number cell, which keeps 15 significant digits: "
                f"{what} of more digits has lost its last ones there. {_RETYPE}"
            )
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ValueError(f"{shown(value)} is not {what}: expected a text of digits.")


def _read_text(text: str, what: str) -> int:
    try:
        return parse_digits(text, what=what)
    except InvalidId:
        if not _rounded(text):
            raise
    raise ValueError(
        f"{shown(text)} is {what} a spreadsheet rewrote as a rounded number: its last digits "
        f"are lost. {_RETYPE}"
    )


def _rounded(text: str) -> bool:
    """Whether ``text`` is a number as a spreadsheet writes one (``9.16E+17``, ``42.0``)."""
    try:
        number = float(text)
    except ValueError:
        return False
    return math.isfinite(number) and ("." in text or "e" in text.lower())


class _DigitsWidget(widgets.Widget):
    """Written as text in every format; read by :func:`read_cell`, then :meth:`checked`."""

    what: ClassVar[str] = "an id"

    def render(self, value: Any, obj: Any = None, **kwargs: Any) -> Any:
        return "" if value is None else str(value)

    def clean(self, value: Any, row: Any = None, **kwargs: Any) -> int | None:
        if value in _EMPTY:
            return None
        return self.checked(read_cell(value, self.what))

    def checked(self, value: int) -> int:
        raise NotImplementedError


class SnowflakeWidget(_DigitsWidget):
    """A Snowflake id of ``layout`` (``None``: ``SNOWID_LAYOUT``), as text."""

    def __init__(self, layout: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.layout_name = layout

    def checked(self, value: int) -> int:
        return get_layout(self.layout_name).check_id(value)


class OrderNumberWidget(_DigitsWidget):
    """An order number of ``format``, ``model_field``'s or the settings' one, as text; its
    check digit and date-time are checked on import."""

    what = "an order number"

    def __init__(
        self,
        model_field: OrderNumberField | None = None,
        format: OrderNumberFormat | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.model_field = model_field
        self._format = format

    def checked(self, value: int) -> int:
        fmt = self._format or (self.model_field.format if self.model_field else build_format())
        return fmt.decode(value).value


class SequenceValueWidget(_DigitsWidget):
    """A sequence value: a number cell where one holds it exactly (sortable), else text."""

    what = "a sequence value"

    def render(self, value: Any, obj: Any = None, **kwargs: Any) -> Any:
        if kwargs.get("force_native_type") and value is not None:
            return value if abs(value) < EXACT_IN_A_NUMBER_CELL else str(value)
        return super().render(value, obj, **kwargs)

    def checked(self, value: int) -> int:
        if not 0 <= value <= MAX_BIGINT:
            raise ValueError(f"{value} is not a sequence value: expected 0 to 2**63 - 1.")
        return value


class SnowflakeForeignKeyWidget(widgets.ForeignKeyWidget):
    """A foreign key to a column of ours, as text; read by the column's widget, then looked
    up by that column (``to_field`` included)."""

    def __init__(self, model: type[models.Model], *, value_widget: _DigitsWidget, **kwargs: Any):
        super().__init__(model, **kwargs)
        self.value_widget = value_widget

    def clean(self, value: Any, row: Any = None, **kwargs: Any) -> Any:
        key = self.value_widget.clean(value)
        if key is None:
            return None
        obj = self.get_instance_by_lookup_fields(key, row, **kwargs)
        return getattr(obj, self.field) if self.key_is_id else obj

    def render(self, value: Any, obj: Any = None, **kwargs: Any) -> Any:
        key = value if self.key_is_id else super().render(value, obj, **kwargs)
        return self.value_widget.render(key)


class SnowflakeManyToManyWidget(widgets.ManyToManyWidget):
    """Many-to-many to a column of ours: each key read by the column's widget, and every
    one must name a row."""

    def __init__(self, model: type[models.Model], *, value_widget: _DigitsWidget, **kwargs: Any):
        super().__init__(model, **kwargs)
        self.value_widget = value_widget

    def clean(self, value: Any, row: Any = None, **kwargs: Any) -> Any:
        if value in _EMPTY:
            return self.model.objects.none()
        cells = value.split(self.separator) if isinstance(value, str) else [value]
        read = (self.value_widget.clean(c.strip() if isinstance(c, str) else c) for c in cells)
        keys = {key for key in read if key is not None}
        found = self.model.objects.filter(**{f"{self.field}__in": keys})
        missing = keys - set(found.values_list(self.field, flat=True))
        if missing:
            names = ", ".join(str(key) for key in sorted(missing))
            raise ValueError(f"No {self.model._meta.verbose_name} with {self.field} {names}.")
        return found


def _value_widget(field: models.Field) -> functools.partial[_DigitsWidget] | None:
    """The widget class (with its arguments) of a column of ours, else ``None``."""
    if isinstance(field, SnowflakeAutoField | SnowflakeField):
        return functools.partial(SnowflakeWidget, layout=field.layout_name)
    if isinstance(field, OrderNumberField):
        return functools.partial(OrderNumberWidget, model_field=field)
    if isinstance(field, SequenceField):
        return functools.partial(SequenceValueWidget)
    return None


class SnowflakeResourceMixin:
    """For a ``ModelResource``: our columns and relations to them get the widgets above."""

    @classmethod
    def widget_from_django_field(cls, f: Any, default: Any = widgets.Widget) -> Any:
        return _value_widget(f) or super().widget_from_django_field(f, default)  # type: ignore[misc]

    @classmethod
    def get_fk_widget(cls, field: Any) -> Any:
        target = _value_widget(field.target_field)
        plain = super().get_fk_widget(field)  # type: ignore[misc]
        if target is None or plain.keywords.get("use_natural_foreign_keys"):
            return plain
        return functools.partial(
            SnowflakeForeignKeyWidget,
            field.related_model,
            field=field.remote_field.field_name,
            value_widget=target(),
        )

    @classmethod
    def get_m2m_widget(cls, field: Any) -> Any:
        target = _value_widget(field.related_model._meta.pk)
        if target is None:
            return super().get_m2m_widget(field)  # type: ignore[misc]
        return functools.partial(
            SnowflakeManyToManyWidget, field.related_model, value_widget=target()
        )


class SnowflakeModelResource(SnowflakeResourceMixin, resources.ModelResource):
    """A ``ModelResource`` whose ids, order numbers and relations to them are text."""
