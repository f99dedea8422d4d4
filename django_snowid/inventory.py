"""Our fields in the installed models, as they registered themselves."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Protocol, cast

from django.apps import apps
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models import Max

from .core.echo import shown
from .core.order_format import OrderNumberFormat
from .exceptions import SnowidError

__all__ = [
    "DECODABLE",
    "ORDER",
    "SEQUENCE",
    "SNOWFLAKE",
    "Kind",
    "check_labels",
    "column_max",
    "field_label",
    "field_of",
    "fields",
    "get_field",
    "kind_of",
    "newest",
    "order_fields",
    "readable",
    "register",
    "rows_holding",
]


class Kind(StrEnum):
    """What a field makes. Equal to its name while callers still pass strings."""

    SNOWFLAKE = "snowflake"
    ORDER = "order"
    SEQUENCE = "sequence"


SNOWFLAKE, ORDER, SEQUENCE = Kind.SNOWFLAKE, Kind.ORDER, Kind.SEQUENCE

_registered: dict[int, tuple[Kind, models.Field]] = {}


def register(field: models.Field, kind: Kind | str) -> None:
    """Called by a field of ours from ``contribute_to_class`` on a concrete model."""
    _registered[id(field)] = (Kind(kind), field)


def kind_of(field: object) -> Kind | None:
    """What a registered field of ours makes; ``None`` for any other field."""
    entry = _registered.get(id(field))
    return entry[0] if entry is not None and entry[1] is field else None


def _installed(field: models.Field) -> bool:
    model = getattr(field, "model", None)
    if model is None or model._meta.abstract or model._meta.proxy:
        return False
    try:
        return apps.get_model(model._meta.label) is model
    except LookupError:  # a model of isolate_apps or a test's own registry
        return False


def field_label(field: models.Field) -> str:
    return f"{field.model._meta.label}.{field.name}"


#: The fields whose values ``decode()`` reads.
DECODABLE: tuple[Kind, ...] = (SNOWFLAKE, ORDER)


def fields(
    kinds: Kind | str | tuple[Kind | str, ...] | None = None, *labels: str
) -> list[models.Field]:
    """The registered fields, of some kinds and app or model labels if given, in a stable order."""
    if isinstance(kinds, str):
        kinds = (kinds,)
    models_named = {label.lower() for label in labels if "." in label}
    found = []
    for their_kind, field in list(_registered.values()):
        if kinds is not None and their_kind not in kinds:
            continue
        if not _installed(field):
            continue
        meta = field.model._meta
        if labels and meta.app_label not in labels and meta.label_lower not in models_named:
            continue
        found.append(field)
    return sorted(found, key=field_label)


class OrderField(Protocol):
    """What services read of an order-number field (without importing its class)."""

    model: type[models.Model]
    name: str
    attname: str
    stream: str

    @property
    def format(self) -> OrderNumberFormat: ...


def order_fields(*labels: str) -> list[OrderField]:
    """The order-number fields of installed models (see :func:`fields`)."""
    return cast("list[OrderField]", fields(ORDER, *labels))


def field_of(model: type[models.Model], kind: Kind) -> models.Field | None:
    """``model``'s field of ``kind``: its primary key if it is one, else the first."""
    if kind_of(model._meta.pk) is kind:
        return model._meta.pk
    return next((f for f in model._meta.concrete_fields if kind_of(f) is kind), None)


def readable(model: type[models.Model] | None = None) -> list[models.Field]:
    """The fields whose values people read: ``model``'s, or every installed one."""
    if model is None:
        return fields(DECODABLE)
    return [f for f in model._meta.concrete_fields if kind_of(f) in DECODABLE]


def newest(of: Iterable[models.Field], using: str | None = None) -> int | None:
    """The largest value in the columns of ``of``: one index lookup a column."""
    values = [v for f in of if (v := column_max(f, using=using)) is not None]
    return max(values, default=None)


def check_labels(labels: list[str], *, field_note: str = "") -> None:
    """Raise for an app or model label that names nothing installed (``field_note`` follows
    a field label)."""
    for label in labels:
        if "." in label:
            try:
                apps.get_model(label)
            except (LookupError, ValueError):
                raise SnowidError(_not_a_model(label, field_note)) from None
        elif label not in {c.label for c in apps.get_app_configs()}:
            raise SnowidError(f"{shown(label)} is not an installed app label.")


def _not_a_model(label: str, field_note: str) -> str:
    message = f"{shown(label)} is not an installed model (app_label.ModelName)."
    model_label, _, name = label.rpartition(".")
    try:
        model = apps.get_model(model_label)
        model._meta.get_field(name)
    except (LookupError, ValueError, FieldDoesNotExist):
        return message
    also = f" ({field_note}.)" if field_note else ""
    return f"{message[:-1]}: it names a field. Did you mean {model._meta.label}?{also}"


def get_field(label: str) -> models.Field:
    """The Snowflake or order-number field called ``app_label.Model.field``."""
    ours = fields(DECODABLE)
    for field in ours:
        if field_label(field).lower() == label.lower():
            return field
    known = ", ".join(field_label(f) for f in ours) or "none"
    raise SnowidError(f"{shown(label)} names no Snowflake or order-number field; known: {known}.")


def column_max(field: models.Field, *, using: str | None = None) -> int | None:
    """The largest value of ``field``'s column: one index lookup on these indexed columns."""
    manager = field.model._base_manager
    if using:
        manager = manager.db_manager(using)
    return manager.aggregate(largest=Max(field.attname))["largest"]


def rows_holding(
    fields: list[models.Field], values: set[int]
) -> dict[int, list[tuple[models.Field, object]]]:
    """For each of ``values``, the fields whose column holds it and each such row's pk."""
    found: dict[int, list[tuple[models.Field, object]]] = {}
    if not values:
        return found
    for field in fields:
        held = _acceptable(field, values)
        if not held:
            continue
        rows = field.model._base_manager.filter(**{f"{field.attname}__in": held}).order_by("pk")
        for value, pk in rows.values_list(field.attname, "pk"):
            found.setdefault(value, []).append((field, pk))
    return found


def _acceptable(field: models.Field, values: set[int]) -> list[int]:
    """The ``values`` that can be numbers of ``field``."""

    check = getattr(field, "check_typed", None)
    if check is None:
        return sorted(values)
    accepted = []
    for value in values:
        try:
            check(value)
        except SnowidError:
            continue
        accepted.append(value)
    return sorted(accepted)
