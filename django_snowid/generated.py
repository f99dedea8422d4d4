"""What our generated-value fields share: ``pre_save``, ``deconstruct()`` and ``shard_from``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core import checks
from django.db import models

from .exceptions import InvalidShardValue


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
