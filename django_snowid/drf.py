"""Django REST framework support (the ``django-snowid[drf]`` extra): ids travel as strings.

JavaScript numbers are doubles: an id above 2**53 sent as a JSON number reaches a browser
with its last digits changed, silently. So our ids are written as strings, read from
strings (or from integers small enough to have survived a JSON number), and foreign keys
to models whose pk is ours go the same way. The OpenAPI schema says ``string`` with a
pattern, through DRF's own ``AutoSchema`` (a ``RegexValidator`` on the field) and through
drf-spectacular when it is installed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from rest_framework import serializers

from .core.layout import Layout
from .encoders import MAX_SAFE_INTEGER
from .exceptions import InvalidId
from .fields import SnowflakeAutoField, SnowflakeField
from .ids.issuer import get_layout

__all__ = [
    "SnowflakeCreatedField",
    "SnowflakeIdField",
    "SnowflakeModelSerializer",
    "SnowflakeSerializerMixin",
]

ID_PATTERN = r"^[0-9]{1,19}$"
_OUR_FIELDS = (SnowflakeAutoField, SnowflakeField)


class _IdPattern(RegexValidator):
    """Gives DRF's ``AutoSchema`` the ``pattern`` of an id (it reads it from validators).

    It runs after parsing, on the int (whose ``str()`` always matches) or, on a foreign
    key, on the related object (whose pk does).
    """

    def __call__(self, value: Any) -> None:
        super().__call__(getattr(value, "pk", value))


ID_PATTERN_VALIDATOR = _IdPattern(ID_PATTERN)


def _spectacular_schema(field_class: type) -> type:
    """Tell drf-spectacular (if installed) that the field is a string of digits."""
    try:
        from drf_spectacular.utils import extend_schema_field
    except ImportError:  # drf-spectacular is optional
        return field_class
    return extend_schema_field({"type": "string", "pattern": ID_PATTERN})(field_class)


def _shown(value: object) -> str:
    """``value`` as an error message quotes it: its repr, long input cut."""
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


@_spectacular_schema
class SnowflakeIdField(serializers.Field):
    """A Snowflake id: written as a string, read from a string of digits or a safe integer.

    ``layout`` names a configured layout (``None``: ``SNOWID_LAYOUT``); values outside its
    range are refused. Integers above 2**53 - 1 are refused unless ``allow_unsafe_numbers``:
    a JSON number that large has already lost precision in any JavaScript client.
    """

    default_error_messages = {
        "invalid": "{value} is not a Snowflake id: send the id as a string of digits.",
        "too_long": "{value} is not a Snowflake id: more than 19 digits.",
        "float": "{value} is not a Snowflake id: ids are integers; send them as strings.",
        "unsafe_number": (
            "{value} was sent as a JSON number above 2**53 - 1: JavaScript clients have "
            "already changed its last digits. Send ids as strings."
        ),
    }

    def __init__(
        self, *, layout: str | None = None, allow_unsafe_numbers: bool = False, **kwargs: Any
    ) -> None:
        # ModelSerializer passes the BIGINT bounds of the model field; the layout's range
        # is narrower and checked here, and a string schema has no minimum/maximum.
        kwargs.pop("max_value", None)
        kwargs.pop("min_value", None)
        validators = [
            v
            for v in kwargs.pop("validators", [])
            if not isinstance(v, (MaxValueValidator, MinValueValidator))
        ]
        validators.append(ID_PATTERN_VALIDATOR)
        super().__init__(validators=validators, **kwargs)
        self.layout_name = layout
        self.allow_unsafe_numbers = allow_unsafe_numbers

    @property
    def layout(self) -> Layout:
        return get_layout(self.layout_name)

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, float):
            self.fail("float", value=_shown(data))
        if isinstance(data, bool) or not isinstance(data, (int, str)):
            self.fail("invalid", value=_shown(data))
        if isinstance(data, int) and data > MAX_SAFE_INTEGER and not self.allow_unsafe_numbers:
            self.fail("unsafe_number", value=_shown(data))
        if isinstance(data, str):
            text = data.strip()
            if not (text.isascii() and text.isdigit()):
                self.fail("invalid", value=_shown(data))
            if len(text.lstrip("0")) > 19:  # before int(): huge strings cost, then raise
                self.fail("too_long", value=_shown(data))
        try:
            return self.layout.check_id(data)
        except InvalidId as exc:
            raise serializers.ValidationError(str(exc), code="out_of_range") from None

    def to_representation(self, value: Any) -> str:
        return str(value)  # an int from the model: str() is the whole cost


class SnowflakeCreatedField(serializers.DateTimeField):
    """Read-only: the creation time decoded from an id (``source`` names it, default pk).

    ``SnowflakeCreatedField()`` reads the pk; ``SnowflakeCreatedField(source="public_id")``
    another Snowflake column. The layout is that of the model field, or ``layout=``.
    """

    def __init__(self, *, layout: str | None = None, **kwargs: Any) -> None:
        kwargs["read_only"] = True
        kwargs.setdefault("source", "pk")
        super().__init__(**kwargs)
        self.layout_name = layout

    def _layout(self) -> Layout:
        if self.layout_name is not None:
            return get_layout(self.layout_name)
        model = getattr(getattr(self.parent, "Meta", None), "model", None)
        if model is not None:
            opts = model._meta
            field = opts.pk if self.source == "pk" else opts.get_field(self.source)
            if isinstance(field, _OUR_FIELDS):
                return field.layout
        return get_layout(None)

    def to_representation(self, value: Any) -> Any:
        if value is None:
            return None
        moment: datetime = self._layout().decode(int(value)).time
        return super().to_representation(moment)


class SnowflakeSerializerMixin:
    """For ``ModelSerializer`` subclasses: our model fields become :class:`SnowflakeIdField`,
    and foreign keys (and many-to-many) to models whose pk is ours carry their ids as
    strings (a ``PrimaryKeyRelatedField`` with a ``SnowflakeIdField`` as ``pk_field``);
    nested serializers (``depth``) do the same."""

    def build_standard_field(self, field_name: str, model_field: models.Field) -> Any:
        field_class, kwargs = super().build_standard_field(field_name, model_field)  # type: ignore[misc]
        if isinstance(model_field, _OUR_FIELDS) and "choices" not in kwargs:
            field_class = SnowflakeIdField
            kwargs.pop("model_field", None)
            kwargs["layout"] = model_field.layout_name
        return field_class, kwargs

    def build_relational_field(self, field_name: str, relation_info: Any) -> Any:
        field_class, kwargs = super().build_relational_field(field_name, relation_info)  # type: ignore[misc]
        target_pk = relation_info.related_model._meta.pk
        if issubclass(field_class, serializers.PrimaryKeyRelatedField) and isinstance(
            target_pk, _OUR_FIELDS
        ):
            kwargs["pk_field"] = SnowflakeIdField(layout=target_pk.layout_name)
            if not kwargs.get("many"):  # ManyRelatedField would pass it the whole list
                kwargs["validators"] = [*kwargs.get("validators", []), ID_PATTERN_VALIDATOR]
        return field_class, kwargs

    def build_nested_field(self, field_name: str, relation_info: Any, nested_depth: int) -> Any:
        field_class, kwargs = super().build_nested_field(field_name, relation_info, nested_depth)  # type: ignore[misc]
        return type(field_class.__name__, (SnowflakeSerializerMixin, field_class), {}), kwargs


class SnowflakeModelSerializer(SnowflakeSerializerMixin, serializers.ModelSerializer):
    """A ``ModelSerializer`` whose Snowflake ids and foreign keys to them are strings."""
