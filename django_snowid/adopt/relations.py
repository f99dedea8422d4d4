"""What points at a model's primary key (keys, many-to-many tables, generic relations),
read from the model layer only."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db import models

from .. import inventory

__all__ = [
    "GenericKey",
    "Holder",
    "generic_keys",
    "generic_keys_of",
    "holders_of",
    "holds_64_bit",
    "snowflake_pk_models",
]

#: Integer columns narrower than 64 bits.
NARROW_TYPES = frozenset(
    {
        "AutoField",
        "SmallAutoField",
        "IntegerField",
        "PositiveIntegerField",
        "SmallIntegerField",
        "PositiveSmallIntegerField",
    }
)
#: The digits of the largest 64-bit id, for text columns.
ID_DIGITS = 19


def holds_64_bit(field: models.Field) -> bool:
    """Whether ``field``'s column can hold every 63-bit id."""
    target = field
    while getattr(target, "remote_field", None) is not None and hasattr(target, "target_field"):
        target = target.target_field  # a key holds its target's values
    internal = target.get_internal_type()
    if internal in NARROW_TYPES:
        return False
    if internal == "CharField" and target.max_length is not None:
        return target.max_length >= ID_DIGITS
    return True


@dataclass(frozen=True)
class GenericKey:
    """A ``GenericForeignKey`` and the field holding its object ids."""

    model: type[models.Model]
    name: str
    id_field: models.Field

    @property
    def label(self) -> str:
        return f"{self.model._meta.label}.{self.id_field.name}"

    @property
    def app_label(self) -> str:
        return self.model._meta.app_label


def _installed_contenttypes() -> bool:
    return apps.is_installed("django.contrib.contenttypes")


def generic_keys(models_: Iterable[type[models.Model]] | None = None) -> list[GenericKey]:
    """Every generic foreign key of ``models_`` (every installed model by default)."""
    if not _installed_contenttypes():
        return []
    from django.contrib.contenttypes.fields import GenericForeignKey

    found = []
    for model in apps.get_models() if models_ is None else models_:
        for private in model._meta.private_fields:
            if isinstance(private, GenericForeignKey):
                id_field = model._meta.get_field(private.fk_field)
                found.append(GenericKey(model, private.name, id_field))  # type: ignore[arg-type]
    return found


def generic_keys_of(model: type[models.Model]) -> Iterator[tuple[models.Field, GenericKey]]:
    """The generic relations that ``model`` declares (taggit-like managers included)."""
    if not _installed_contenttypes():
        return
    from django.contrib.contenttypes.fields import GenericRelation

    found: dict[str, tuple[models.Field, GenericKey]] = {}
    for field in model._meta.get_fields(include_hidden=True):
        if isinstance(field, GenericRelation):
            related: Any = field.related_model
            id_field = related._meta.get_field(field.object_id_field_name)
            key = GenericKey(related, field.name, id_field)
            found.setdefault(key.label, (field, key))  # a manager's own field wins
            continue
        through = getattr(getattr(field, "remote_field", None), "through", None)
        if isinstance(through, type) and issubclass(through, models.Model):
            for key in generic_keys([through]):
                found[key.label] = (field, key)  # type: ignore[assignment]
    yield from found.values()


def snowflake_pk_models() -> list[type[models.Model]]:
    """The installed models whose primary key is a Snowflake field of ours."""
    return [
        f.model
        for f in inventory.fields("snowflake")
        if f.primary_key and not f.model._meta.auto_created
    ]


@dataclass(frozen=True)
class Holder:
    """A column that holds values of an adopted primary key."""

    model: type[models.Model]
    field: models.Field
    kind: str  # "pk", "foreign key", "one-to-one", "many-to-many", "generic relation"

    @property
    def table(self) -> str:
        return self.model._meta.db_table

    @property
    def column(self) -> str:
        return str(self.field.column)


def holders_of(model: type[models.Model]) -> list[Holder]:
    """Every column holding ``model``'s primary key values: its own, keys level after
    level, then the many-to-many tables."""

    pk = model._meta.pk
    assert pk is not None
    found = [Holder(model, pk, "pk")]
    seen = {(model._meta.db_table, pk.column)}
    queue: list[models.Field] = [pk]
    while queue:
        target = queue.pop(0)
        for related in target.model._meta.get_fields(include_hidden=True):
            field: Any = getattr(related, "field", None)
            if not related.auto_created or field is None or related.concrete:
                continue
            if field.many_to_many:
                continue  # its through table's key is the holder
            if getattr(field, "target_field", None) is not target:
                continue
            through = field.model._meta.auto_created
            kind = (
                "many-to-many"
                if through
                else "one-to-one"
                if isinstance(field, models.OneToOneField)
                else "foreign key"
            )
            key = (field.model._meta.db_table, field.column)
            if key in seen or field.model._meta.proxy:
                continue
            seen.add(key)
            found.append(Holder(field.model, field, kind))
            if field.unique or field.primary_key:
                queue.append(field)  # keys may point at a one-to-one in turn
    return found
