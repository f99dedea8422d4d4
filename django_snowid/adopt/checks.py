"""System checks of generic relations: an object-id column (of any app: ours, the
project's, django-taggit's) that cannot hold the 64-bit ids of a Snowflake primary key."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Tags, Warning
from django.db.models import Model

from ..checks import HINT, Check
from .relations import GenericKey, generic_keys, generic_keys_of, holds_64_bit, snowflake_pk_models

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
    messages: list[CheckMessage] = []
    reported: set[str] = set()
    for model in owners:
        for field, key in generic_keys_of(model):
            if holds_64_bit(key.id_field):
                continue
            reported.add(key.label)
            messages.append(
                Error(
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
            )
    for key in keys:
        if key.label in reported or holds_64_bit(key.id_field):
            continue
        named = ", ".join(sorted(m._meta.label for m in owners))
        messages.append(
            Warning(
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
        )
    return messages


#: The checks of adoption, with their tags: ``AppConfig.ready()`` registers them.
CHECKS: tuple[Check, ...] = ((check_generic_relations, Tags.models),)
