"""Django REST framework support: ids, order numbers and foreign keys to them travel as
strings, typed ``string`` with a pattern in the OpenAPI schema.

Serializer classes and mixins are documented in comments: drf-spectacular would take a
docstring as the description of every user class that has none.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime, timezone
from typing import Any

from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from rest_framework import exceptions, serializers, views
from rest_framework.response import Response
from rest_framework.schemas.openapi import AutoSchema

from .conf import conf
from .core.echo import shown
from .core.layout import Layout
from .core.order_format import OrderNumberFormat
from .core.sent import ORDER_NUMBER, SNOWFLAKE_ID, sent_digits, sent_refusal
from .exceptions import (
    TRY_AGAIN,
    ClockMovedBackwards,
    InvalidId,
    InvalidSentValue,
    OrderNumberError,
    SequenceError,
    SnowidError,
    WorkerIdError,
)
from .fields import OrderNumberField, SnowflakeAutoField, SnowflakeField
from .orders.formats import build_format
from .pagination.drf import SnowflakeCursorPagination
from .settings_layouts import get_layout

__all__ = [
    "ID_PATTERN",
    "LOOKUP_VALUE_REGEX",
    "OrderNumberPositionField",
    "OrderNumberSerializerField",
    "SnowflakeAutoSchema",
    "SnowflakeCreatedField",
    "SnowflakeCursorPagination",
    "SnowflakeIdField",
    "SnowflakeModelSerializer",
    "SnowflakeSerializerMixin",
    "SnowflakeViewSetMixin",
    "TryAgainLater",
    "exception_handler",
]

#: What an id or an order number looks like in JSON and in the schema: 1 to 19 digits.
ID_PATTERN = r"^[0-9]{1,19}$"
#: The same in a URL (a router's ``lookup_value_regex``).
LOOKUP_VALUE_REGEX = "[0-9]{1,19}"
_OUR_FIELDS = (SnowflakeAutoField, SnowflakeField)

logger = logging.getLogger(__name__)


class TryAgainLater(exceptions.APIException):
    """503 with ``Retry-After`` for a passing refusal; the detail never names servers."""

    status_code = 503
    default_code = "try_again"

    def __init__(self, refusal: SnowidError) -> None:
        if isinstance(refusal, ClockMovedBackwards):
            self.wait = max(1, math.ceil(refusal.behind_ms / 1000))
        elif isinstance(refusal, WorkerIdError):
            self.wait = max(1, math.ceil(float(conf.WORKER_LEASE_TTL_S)))
        else:
            self.wait = 1
        if isinstance(refusal, OrderNumberError):
            what = "No order number"
        elif isinstance(refusal, SequenceError):
            what = "No sequence value"
        else:
            what = "No id"
        super().__init__(
            f"{what} can be issued right now: nothing was saved. Try again in {self.wait} s."
        )


def _try_again(exc: BaseException) -> BaseException:
    """``exc`` as the API answers it: a :class:`TryAgainLater` for our passing refusals."""
    if isinstance(exc, TRY_AGAIN):
        logger.warning("Nothing was saved, the client is asked to retry: %s", exc)
        return TryAgainLater(exc)
    return exc


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus a 503 with ``Retry-After`` for our passing refusals."""
    return views.exception_handler(_try_again(exc), context)


class _SchemaPattern(RegexValidator):
    """Gives DRF's ``AutoSchema`` an id's ``pattern``; checks nothing (the parser did)."""

    def __call__(self, value: Any) -> None:
        return None


ID_PATTERN_VALIDATOR = _SchemaPattern(ID_PATTERN)


def _spectacular_schema(field_class: type) -> type:
    """Tell drf-spectacular (if installed) that the field is a string of digits."""
    try:
        from drf_spectacular.utils import extend_schema_field
    except ImportError:
        return field_class
    return extend_schema_field({"type": "string", "pattern": ID_PATTERN})(field_class)


class _DigitsField(serializers.Field):
    """Written as a string, read from digits or an integer up to 2**53 - 1 (unless
    ``allow_unsafe_numbers``); subclasses validate in :meth:`to_int`."""

    def __init__(self, *, allow_unsafe_numbers: bool = False, **kwargs: Any) -> None:
        # A string schema has no minimum/maximum; the range is checked by to_int().
        kwargs.pop("max_value", None)
        kwargs.pop("min_value", None)
        validators = [
            v
            for v in kwargs.pop("validators", [])
            if not isinstance(v, (MaxValueValidator, MinValueValidator))
        ]
        validators.append(ID_PATTERN_VALIDATOR)
        super().__init__(validators=validators, **kwargs)
        self.allow_unsafe_numbers = allow_unsafe_numbers

    #: What a value is called in the parser's refusals.
    what = "an id"

    def to_int(self, value: int | str) -> int:
        """``value`` as a valid int, or :class:`InvalidId` saying why not."""
        raise NotImplementedError

    def to_internal_value(self, data: Any) -> int:
        code = sent_refusal(data, allow_unsafe=self.allow_unsafe_numbers)
        if code is not None:
            self.fail(code, value=shown(data))
        if isinstance(data, str):
            try:
                data = sent_digits(data, self.what)
            except InvalidSentValue as exc:
                raise serializers.ValidationError(str(exc), code=exc.code) from None
        try:
            return self.to_int(data)
        except InvalidId as exc:
            raise serializers.ValidationError(str(exc), code="out_of_range") from None

    def to_representation(self, value: Any) -> str:
        return str(value)


@_spectacular_schema
class SnowflakeIdField(_DigitsField):
    """A Snowflake id of ``layout`` (``None``: ``SNOWID_LAYOUT``), as a string."""

    default_error_messages = dict(SNOWFLAKE_ID.messages)

    def __init__(
        self, *, layout: str | None = None, allow_unsafe_numbers: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(allow_unsafe_numbers=allow_unsafe_numbers, **kwargs)
        self.layout_name = layout

    @property
    def layout(self) -> Layout:
        return get_layout(self.layout_name)

    def to_int(self, value: int | str) -> int:
        return self.layout.check_id(value)


@_spectacular_schema
class OrderNumberSerializerField(_DigitsField):
    """An order number of ``format``, ``model_field``'s or the default one, as a string."""

    what = ORDER_NUMBER.what
    default_error_messages = dict(ORDER_NUMBER.messages)

    def __init__(
        self,
        *,
        model_field: models.Field | None = None,
        format: OrderNumberFormat | None = None,
        allow_unsafe_numbers: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(allow_unsafe_numbers=allow_unsafe_numbers, **kwargs)
        self.model_field = model_field
        self._format = format

    @property
    def format(self) -> OrderNumberFormat:
        if self._format is not None:
            return self._format
        if isinstance(self.model_field, OrderNumberField):
            return self.model_field.format
        return build_format()

    def to_int(self, value: int | str) -> int:
        return self.format.decode(value).value


def _string_field_spec(model_field: Any) -> tuple[type[_DigitsField], dict[str, Any]] | None:
    """The string serializer field class and arguments for a field of ours, else None."""
    if isinstance(model_field, _OUR_FIELDS):
        return SnowflakeIdField, {"layout": model_field.layout_name}
    if isinstance(model_field, OrderNumberField):
        return OrderNumberSerializerField, {"model_field": model_field}
    return None


def _string_field(model_field: Any) -> _DigitsField | None:
    spec = _string_field_spec(model_field)
    return None if spec is None else spec[0](**spec[1])


@_spectacular_schema
class _StringSlugRelatedField(serializers.SlugRelatedField):
    """A foreign key by ``to_field`` to a column of ours, as a string checked before lookup."""

    def __init__(self, *, value_field: _DigitsField, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value_field = value_field

    def to_internal_value(self, data: Any) -> Any:
        return super().to_internal_value(self.value_field.to_internal_value(data))

    def to_representation(self, obj: Any) -> str:
        return str(getattr(obj, self.slug_field))


class SnowflakeCreatedField(serializers.DateTimeField):
    """Read-only: the creation time decoded from the id ``source`` names (default pk)."""

    def __init__(self, *, layout: str | None = None, **kwargs: Any) -> None:
        kwargs["read_only"] = True
        kwargs.setdefault("source", "pk")
        # UTC, as every decoding writes an id's time, whatever TIME_ZONE says.
        kwargs.setdefault("default_timezone", timezone.utc)
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


class OrderNumberPositionField(serializers.Field):
    """Read-only, for staff APIs: an order number's parts, true position included."""

    def __init__(self, *, format: OrderNumberFormat | None = None, **kwargs: Any) -> None:
        kwargs["read_only"] = True
        super().__init__(**kwargs)
        self._format = format

    def _order_format(self) -> OrderNumberFormat:
        if self._format is not None:
            return self._format
        model = getattr(getattr(self.parent, "Meta", None), "model", None)
        if model is not None:
            field = model._meta.get_field(self.source)
            if isinstance(field, OrderNumberField):
                return field.format
        return build_format()

    def to_representation(self, value: Any) -> Any:
        if value is None:
            return None
        return self._order_format().decode(int(value)).as_dict()


# For ModelSerializers: our fields, relations to them and nested serializers as strings.
class SnowflakeSerializerMixin:
    def save(self, **kwargs: Any) -> Any:
        try:
            return super().save(**kwargs)  # type: ignore[misc]
        except TRY_AGAIN as exc:
            raise _try_again(exc) from exc

    def build_standard_field(self, field_name: str, model_field: models.Field) -> Any:
        field_class, kwargs = super().build_standard_field(field_name, model_field)  # type: ignore[misc]
        spec = _string_field_spec(model_field)
        if spec is not None and "choices" not in kwargs:
            kwargs.pop("model_field", None)
            return spec[0], {**kwargs, **spec[1]}
        return field_class, kwargs

    def build_relational_field(self, field_name: str, relation_info: Any) -> Any:
        field_class, kwargs = super().build_relational_field(field_name, relation_info)  # type: ignore[misc]
        meta = relation_info.related_model._meta
        if issubclass(field_class, serializers.PrimaryKeyRelatedField):
            pk_field = _string_field(meta.pk)
            if pk_field is not None:
                kwargs["pk_field"] = pk_field
                kwargs["validators"] = [*kwargs.get("validators", []), ID_PATTERN_VALIDATOR]
        elif issubclass(field_class, serializers.SlugRelatedField) and "slug_field" in kwargs:
            value_field = _string_field(meta.get_field(kwargs["slug_field"]))
            if value_field is not None:
                field_class = _StringSlugRelatedField
                kwargs["value_field"] = value_field
                kwargs["validators"] = [*kwargs.get("validators", []), ID_PATTERN_VALIDATOR]
        return field_class, kwargs

    def build_nested_field(self, field_name: str, relation_info: Any, nested_depth: int) -> Any:
        field_class, kwargs = super().build_nested_field(field_name, relation_info, nested_depth)  # type: ignore[misc]
        # Named after its model, so drf-spectacular gives each its own component.
        name = f"Nested{relation_info.related_model.__name__}Serializer"
        return type(name, (SnowflakeSerializerMixin, field_class), {}), kwargs


# A ModelSerializer whose ids, order numbers and foreign keys to them are strings.
class SnowflakeModelSerializer(SnowflakeSerializerMixin, serializers.ModelSerializer):
    pass


# For viewsets looked up by an id or order number: the URL matches only digits.
class SnowflakeViewSetMixin:
    lookup_value_regex = LOOKUP_VALUE_REGEX

    def handle_exception(self, exc: Exception) -> Any:
        return super().handle_exception(_try_again(exc))  # type: ignore[misc]


class SnowflakeAutoSchema(AutoSchema):
    """DRF's ``AutoSchema``, plus the id pattern on many-to-many items."""

    def map_field(self, field: Any) -> dict[str, Any]:
        schema: dict[str, Any] = super().map_field(field)
        items = schema.get("items")
        if isinstance(field, serializers.ManyRelatedField) and isinstance(items, dict):
            self.map_field_validators(field.child_relation, items)
        return schema
