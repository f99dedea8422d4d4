"""Django REST framework support (the ``django-snowid[drf]`` extra): ids and order numbers
travel as strings.

JavaScript numbers are doubles: an id or an order number above 2**53 sent as a JSON number
reaches a browser with its last digits changed, silently (an order number's shard with
them). So our ids and order numbers are written as strings, read from strings (or from
integers small enough to have survived a JSON number), and foreign keys to them go the
same way. The OpenAPI schema says ``string`` with a pattern, through DRF's own
``AutoSchema`` (a validator on the field carries the pattern) and through drf-spectacular
when it is installed.

Our serializer classes and mixins document themselves in comments, not docstrings:
drf-spectacular takes the first docstring of a serializer's or view's classes as its
description in the schema, and ours would become the description of every user class
that has none.
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
from .core.digits import parse_digits
from .core.echo import shown
from .core.layout import Layout
from .core.order_format import OrderNumberFormat
from .encoders import MAX_SAFE_INTEGER
from .exceptions import (
    TRY_AGAIN,
    ClockMovedBackwards,
    InvalidId,
    OrderNumberError,
    SequenceError,
    SnowidError,
    WorkerIdError,
)
from .fields import OrderNumberField, SnowflakeAutoField, SnowflakeField
from .layouts import get_layout
from .orders.formats import build_format

__all__ = [
    "ID_PATTERN",
    "LOOKUP_VALUE_REGEX",
    "OrderNumberPositionField",
    "OrderNumberSerializerField",
    "SnowflakeAutoSchema",
    "SnowflakeCreatedField",
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
    """503 with ``Retry-After``: a refusal that passes by itself (``TRY_AGAIN``); the
    detail names what could not be issued, never the servers behind it."""

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
    """DRF's own handler, plus a 503 with ``Retry-After`` for our passing refusals, in any
    view (``REST_FRAMEWORK["EXCEPTION_HANDLER"]``)."""
    return views.exception_handler(_try_again(exc), context)


class _SchemaPattern(RegexValidator):
    """Gives DRF's ``AutoSchema`` the ``pattern`` of an id (it reads it from validators).

    It checks nothing when it runs: the field's own parser has refused all but digits
    already, and on a relation it would be handed the related object.
    """

    def __call__(self, value: Any) -> None:
        return None


ID_PATTERN_VALIDATOR = _SchemaPattern(ID_PATTERN)


def _spectacular_schema(field_class: type) -> type:
    """Tell drf-spectacular (if installed) that the field is a string of digits."""
    try:
        from drf_spectacular.utils import extend_schema_field
    except ImportError:  # drf-spectacular is optional
        return field_class
    return extend_schema_field({"type": "string", "pattern": ID_PATTERN})(field_class)


class _DigitsField(serializers.Field):
    """What ids and order numbers share: written as a string, read from a string of ASCII
    digits or from an integer; an integer above 2**53 - 1 is refused unless
    ``allow_unsafe_numbers`` (a JSON number that large has already lost precision in any
    JavaScript client). Subclasses say which values are valid (:meth:`to_int`)."""

    def __init__(self, *, allow_unsafe_numbers: bool = False, **kwargs: Any) -> None:
        # ModelSerializer passes the BIGINT bounds of the model field; the valid range is
        # narrower and checked here, and a string schema has no minimum/maximum.
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
        if isinstance(data, float):
            self.fail("float", value=shown(data))
        if isinstance(data, bool) or not isinstance(data, (int, str)):
            self.fail("invalid", value=shown(data))
        if isinstance(data, int) and data > MAX_SAFE_INTEGER and not self.allow_unsafe_numbers:
            self.fail("unsafe_number", value=shown(data))
        if isinstance(data, str):
            try:  # the one parser of typed numbers decides, in its own words
                data = parse_digits(data, what=self.what)
            except InvalidId as exc:
                code = "too_long" if data.isascii() and data.isdigit() else "invalid"
                raise serializers.ValidationError(str(exc), code=code) from None
        try:
            return self.to_int(data)
        except InvalidId as exc:
            raise serializers.ValidationError(str(exc), code="out_of_range") from None

    def to_representation(self, value: Any) -> str:
        return str(value)  # an int from the model: str() is the whole cost


@_spectacular_schema
class SnowflakeIdField(_DigitsField):
    """A Snowflake id: written as a string, read from a string of digits or a safe integer.

    ``layout`` names a configured layout (``None``: ``SNOWID_LAYOUT``); values outside its
    range are refused. Integers above 2**53 - 1 are refused unless ``allow_unsafe_numbers``:
    a JSON number that large has already lost precision in any JavaScript client.
    """

    default_error_messages = {
        "invalid": "{value} is not a Snowflake id: send the id as a string of digits.",
        "float": "{value} is not a Snowflake id: ids are integers; send them as strings.",
        "unsafe_number": (
            "{value} was sent as a JSON number above 2**53 - 1: JavaScript clients have "
            "already changed its last digits. Send ids as strings."
        ),
    }

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
    """An order number: written as a string, read from a string of digits or a safe integer.

    Its format is ``format``, or that of ``model_field`` (an ``OrderNumberField``), or the
    ``SNOWID_ORDER_*`` default. A value that is no number of that format (a stem that is
    not a date-time, a sequence of 0) is refused, and so are integers above 2**53 - 1
    unless ``allow_unsafe_numbers``: every order number of the default formats is larger,
    and has lost digits, and maybe its shard, in any JavaScript client.
    """

    what = "an order number"
    default_error_messages = {
        "invalid": "{value} is not an order number: send it as a string of digits.",
        "float": (
            "{value} is not an order number: order numbers are integers; send them as strings."
        ),
        "unsafe_number": (
            "{value} was sent as a JSON number above 2**53 - 1: JavaScript clients have "
            "already changed its last digits (and maybe its shard). Send order numbers as "
            "strings."
        ),
    }

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
    """The serializer field class (and its arguments) that carries ``model_field``'s values
    as strings, if it is a field of ours."""
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
    """A foreign key to a column of ours that is not the pk (``to_field``): the value as a
    string out, read by ``value_field`` (digits, range, format) before the lookup."""

    def __init__(self, *, value_field: _DigitsField, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value_field = value_field

    def to_internal_value(self, data: Any) -> Any:
        return super().to_internal_value(self.value_field.to_internal_value(data))

    def to_representation(self, obj: Any) -> str:
        return str(getattr(obj, self.slug_field))


class SnowflakeCreatedField(serializers.DateTimeField):
    """Read-only: the creation time decoded from an id (``source`` names it, default pk).

    ``SnowflakeCreatedField()`` reads the pk; ``SnowflakeCreatedField(source="public_id")``
    another Snowflake column. The layout is that of the model field, or ``layout=``.
    """

    def __init__(self, *, layout: str | None = None, **kwargs: Any) -> None:
        kwargs["read_only"] = True
        kwargs.setdefault("source", "pk")
        # UTC with a "Z", as every decoding writes an id's time, whatever TIME_ZONE says
        # (DRF would write the current zone's offset); ``default_timezone=`` changes it.
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
    """Read-only, for staff APIs: an order number's parts, its true position included.

    ``OrderNumberPositionField(source="number")`` gives ``{"number", "time", "sequence",
    "shard", ...}`` (:meth:`DecodedOrderNumber.as_dict`); for a concealed number
    ``sequence`` is its true position in its second and ``visible_sequence`` the one it
    shows. The format is that of the model field ``source`` names, or ``format=``.
    """

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


# For ``ModelSerializer`` subclasses (``SnowflakeModelSerializer`` is one): our model fields
# (Snowflake ids, order numbers) become string fields, and foreign keys (and many-to-many)
# to our columns, the pk or a ``to_field``, carry their values as strings; nested
# serializers (``depth``) do the same. No docstring: see the module's.
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
        # Named after its model: DRF calls every nested serializer "NestedSerializer", and
        # drf-spectacular would describe all of them with the first one's component.
        name = f"Nested{relation_info.related_model.__name__}Serializer"
        return type(name, (SnowflakeSerializerMixin, field_class), {}), kwargs


# A ``ModelSerializer`` whose Snowflake ids, order numbers and foreign keys to them are
# strings (no docstring: see the module's).
class SnowflakeModelSerializer(SnowflakeSerializerMixin, serializers.ModelSerializer):
    pass


# For viewsets of models looked up by an id or an order number: a router matches only
# digits in the URL (``lookup_value_regex``; anything else is a 404 without a query), and
# schemas (drf-spectacular) type the path parameter as a string of digits, not an
# integer. No docstring: drf-spectacular would make it every operation's description.
class SnowflakeViewSetMixin:
    lookup_value_regex = LOOKUP_VALUE_REGEX

    def handle_exception(self, exc: Exception) -> Any:
        return super().handle_exception(_try_again(exc))  # type: ignore[misc]


class SnowflakeAutoSchema(AutoSchema):
    """DRF's ``AutoSchema``, which reads a field's ``pattern`` from its validators for
    top-level fields only, plus the pattern on the items of many-to-many relations to our
    ids (``"DEFAULT_SCHEMA_CLASS": "django_snowid.drf.SnowflakeAutoSchema"``)."""

    def map_field(self, field: Any) -> dict[str, Any]:
        schema: dict[str, Any] = super().map_field(field)
        items = schema.get("items")
        if isinstance(field, serializers.ManyRelatedField) and isinstance(items, dict):
            self.map_field_validators(field.child_relation, items)
        return schema
