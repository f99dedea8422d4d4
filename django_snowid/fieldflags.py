"""What our generated-value fields share: ``pre_save``, ``deconstruct()`` and ``shard_from``
(its checks: E201, and W201 for a source whose low bits are not spread)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core import checks
from django.core.exceptions import FieldDoesNotExist
from django.db import models

from . import inventory
from .exceptions import InvalidShardValue, LayoutError


def value_on_add(
    field: models.Field, instance: models.Model, add: bool, make: Callable[[models.Model], Any]
) -> Any:
    """``pre_save`` of a generated field, as ``auto_now_add`` does it: on INSERT a value set
    by hand is kept, and a missing one is made and written back on the instance."""
    value = getattr(instance, field.attname)
    if add and value is None:
        value = make(instance)
        setattr(instance, field.attname, value)
    return value


def drop_generated_defaults(kwargs: dict[str, Any], *, primary_key: bool = False) -> None:
    """Our fields default to ``unique=True, editable=False``: write only what differs.

    ``Field.deconstruct()`` writes what differs from *its* defaults (``unique=False``,
    ``editable=True``); turn that around.
    """
    if primary_key:
        kwargs.pop("unique", None)  # implied by primary_key
    elif kwargs.get("unique") is True:
        del kwargs["unique"]
    else:
        kwargs["unique"] = False
    if kwargs.get("editable") is False:
        del kwargs["editable"]
    else:
        kwargs["editable"] = True


def shard_source(instance: models.Model, shard_from: str) -> int:
    """The non-negative integer ``shard_from`` names on ``instance`` (e.g. its user id).

    Raises :class:`InvalidShardValue` for a missing attribute, ``None``, a negative
    number or a non-integer: the value is refused before anything is issued or written.
    """
    try:
        value = getattr(instance, shard_from)
    except AttributeError:
        raise InvalidShardValue(
            f"shard_from={shard_from!r}: {type(instance).__name__} has no such attribute."
        ) from None
    if type(value) is int and value >= 0:  # the common case, checked first
        return value
    label = f"{type(instance).__name__}.{shard_from}"
    if value is None:
        raise InvalidShardValue(
            f"{label} is None: the new value needs it to carry the shard. "
            "Nothing was issued and nothing was written."
        )
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidShardValue(
            f"{label} is {value!r}: the shard comes from a non-negative integer. "
            "Nothing was issued and nothing was written."
        )
    return value


def check_shard_from(field: models.Field, shard_from: str | None) -> list[checks.CheckMessage]:
    """E201: ``shard_from`` must name a field or an attribute of the model."""
    if shard_from is None:
        return []
    model = field.model
    fields = model._meta.get_fields()
    names = {f.name for f in fields} | {getattr(f, "attname", None) for f in fields}
    if shard_from in names or hasattr(model, shard_from):
        return []
    return [
        checks.Error(
            f"shard_from={shard_from!r} names no field or attribute of {model._meta.label}.",
            hint="See the README section 'System checks', django_snowid.E201.",
            obj=field,
            id="django_snowid.E201",
        )
    ]


def _spread_of(field: Any, seen: set[int]) -> tuple[int, str] | None:
    """How many low bits of ``field``'s values are evenly spread, and why, when we know it
    (our fields, and foreign keys to them); ``None`` for any other column."""
    if id(field) in seen:
        return None
    seen.add(id(field))
    target = getattr(field, "target_field", None)
    if getattr(field, "remote_field", None) is not None and target is not None:
        return _spread_of(target, seen)  # a foreign key holds its target's values
    kind = inventory.kind_of(field)
    if kind not in inventory.DECODABLE:
        return None
    label = inventory.field_label(field)
    try:
        # An order number ends with its shard; a Snowflake id of a layout with shard bits
        # too, and above those its sequence (spread_bits of it).
        if kind == "order":
            fmt = field.format
            width = fmt.shard_bits if fmt.packing == "binary" else fmt.shard_digits
            above = 0
        else:
            layout = field.layout
            width, above = layout.shard_bits, layout.spread_bits or 0
            if not width:
                return above, f"{label} (layout {layout.name!r}, spread_bits={above})"
    except (LayoutError, TypeError):
        return None  # E003, E101 or E202 say what is wrong with it
    if field.shard_from is None:
        return 0, f"{label}, whose shard part is always 0 (it has no shard_from)"
    try:
        source = _spread_of(field.model._meta.get_field(field.shard_from), seen)
    except FieldDoesNotExist:  # an attribute, not a field: nothing known
        return None
    if source is None:
        return None
    if source[0] < width:
        return source[0], f"{label}, which ends with the low bits of {source[1]}"
    return width + above, label


def check_shard_spread(
    field: models.Field, shard_from: str | None, needed: int
) -> list[checks.CheckMessage]:
    """W201: ``shard_from`` names values whose low bits we know to be uneven (ids of a
    layout that does not spread them): most rows would share a few shards."""
    if shard_from is None or not needed:
        return []
    try:
        source = field.model._meta.get_field(shard_from)
    except FieldDoesNotExist:  # an attribute (E201 covers a name that is nothing)
        return []
    spread = _spread_of(source, {id(field)})
    if spread is None or spread[0] >= needed:
        return []
    bits, where = spread
    return [
        checks.Warning(
            f"shard_from={shard_from!r} takes the shard from {where}: only the low {bits} "
            f"bits of its values are evenly spread, and the {needed} this field's shard "
            "needs would put most rows on a few shards.",
            hint="Give the source's layout spread_bits >= "
            f"{needed} (the default is 4). See the README section 'System checks', "
            "django_snowid.W201.",
            obj=field,
            id="django_snowid.W201",
        )
    ]
