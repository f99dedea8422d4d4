"""System checks of adoption: generic relations of any app whose object ids cannot hold a
Snowflake id, and columns in the database too narrow for a Snowflake key."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.checks import CheckMessage, Error, Tags, Warning
from django.db import connections, models, router
from django.db.models import Model

from ..checks import HINT, Check
from .plan import NARROW_DB_TYPES
from .relations import (
    GenericKey,
    generic_keys,
    generic_keys_of,
    holders_of,
    holds_64_bit,
    snowflake_pk_models,
)
from .schema import column_types

__all__ = ["CHECKS"]

FAILS = "fails with 'integer out of range' on PostgreSQL and 'Out of range value' on MariaDB/MySQL"


def _column(key: GenericKey) -> str:
    field = key.id_field
    return f"{key.label} ({type(field).__name__}, column {field.column!r})"


def check_generic_relations(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    return generic_relation_messages(snowflake_pk_models(), generic_keys())


def generic_relation_messages(
    owners: list[type[Model]], keys: list[GenericKey]
) -> list[CheckMessage]:
    """E900: a generic relation of ``owners`` too narrow for ids; W900: other narrow ``keys``."""

    if not owners:
        return []
    declared = _narrow_declared(owners)
    messages = [_declared_relation(*found) for found in declared]
    reported = {key.label for _, _, key in declared}
    named = ", ".join(sorted(m._meta.label for m in owners))
    for key in keys:
        if key.label not in reported and not holds_64_bit(key.id_field):
            messages.append(_other_relation(key, named))
    return messages


def _narrow_declared(owners: list[type[Model]]) -> list[tuple[type[Model], Any, GenericKey]]:
    """``(owner, relation field, key)`` of each narrow generic relation ``owners`` declare."""
    return [
        (model, field, key)
        for model in owners
        for field, key in generic_keys_of(model)
        if not holds_64_bit(key.id_field)
    ]


def _declared_relation(model: type[Model], field: Any, key: GenericKey) -> CheckMessage:
    return Error(
        f"{model._meta.label} has a Snowflake primary key, and its generic relation "
        f"{field.name!r} stores its ids in {_column(key)}, of app "
        f"{key.app_label!r}, which cannot hold a 64-bit id: the first row it "
        f"relates {FAILS}.",
        hint=f"Give {field.name!r} a through model whose object_id is a "
        "BigIntegerField (django-taggit: TaggableManager(through=...)), or make "
        f"{key.label} a PositiveBigIntegerField if it is your own. "
        + HINT.format(id="django_snowid.E900"),
        obj=field,
        id="django_snowid.E900",
    )


def _other_relation(key: GenericKey, named: str) -> CheckMessage:
    return Warning(
        f"The generic relation {key.model._meta.label}.{key.name} of app "
        f"{key.app_label!r} stores object ids in {_column(key)}, which cannot hold a "
        f"64-bit id, and {named} have Snowflake primary keys: relating one of their "
        f"rows {FAILS}.",
        hint=f"Make {key.label} a PositiveBigIntegerField if it is your own; for another "
        "app's model, relate Snowflake rows through a model of your own (the docs have "
        "the recipe for django-taggit), then silence this warning. "
        + HINT.format(id="django_snowid.W900"),
        obj=key.model,
        id="django_snowid.W900",
    )


def narrow_columns(model: type[Model], using: str) -> list[str]:
    """``table.column (type)`` of the columns on ``using`` holding ``model``'s ids that are
    narrower than 64 bits."""
    connection = connections[using]
    tables = set(connection.introspection.table_names())
    found = []
    types: dict[str, dict[str, tuple[str, bool]]] = {}
    for holder in holders_of(model):
        if holder.table not in tables:
            continue  # not migrated yet
        if holder.table not in types:
            types[holder.table] = column_types(connection, holder.table)
        db_type = types[holder.table].get(holder.column, ("", True))[0]
        if db_type.lower() in NARROW_DB_TYPES:
            found.append(f"{holder.table}.{holder.column} ({db_type})")
    return found


def check_narrow_columns(
    app_configs: Any = None, databases: Iterable[str] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """W910: a Snowflake primary key whose ids some of its columns cannot hold yet."""
    messages: list[CheckMessage] = []
    for alias in databases or ():
        if connections[alias].vendor == "sqlite":
            continue  # every integer holds 64 bits
        for model in snowflake_pk_models():
            if not router.allow_migrate_model(alias, model):
                continue
            narrow = narrow_columns(model, alias)
            if narrow:
                messages.append(_narrow_warning(model, alias, narrow))
    return messages


def _narrow_warning(model: type[models.Model], alias: str, narrow: list[str]) -> CheckMessage:
    label = model._meta.label
    return Warning(
        f"{label} has a Snowflake primary key, but on the database {alias!r} "
        f"{', '.join(narrow)} cannot hold its 64-bit ids: inserting a row {FAILS}.",
        hint=f"Switch it with 'manage.py snowid_adopt {label}' (it keeps every id), or give "
        "the model back the key its migrations made. " + HINT.format(id="django_snowid.W910"),
        obj=model,
        id="django_snowid.W910",
    )


#: The checks of adoption, with their tags: ``AppConfig.ready()`` registers them.
CHECKS: tuple[Check, ...] = (
    (check_generic_relations, Tags.models),
    (check_narrow_columns, Tags.database),
)
