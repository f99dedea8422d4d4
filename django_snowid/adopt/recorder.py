"""``django_migrations`` under a Snowflake ``DEFAULT_AUTO_FIELD``: its model has no app, so
its rows take 64-bit ids; a table made under ``AutoField`` is widened first."""

from __future__ import annotations

from typing import Any

from django.db import connections, models

from .. import inventory
from ..db.private import migration_recorder_model
from .plan import NARROW_DB_TYPES
from .schema import column_types

__all__ = ["narrow_recorder", "pre_migrate", "widen_recorder"]


def narrow_recorder(using: str) -> str | None:
    """The type of ``django_migrations``' key on ``using`` when the recorder draws Snowflake
    ids that it cannot hold, else ``None``."""
    model = migration_recorder_model()
    pk = model._meta.pk
    if pk is None or inventory.kind_of(pk) is not inventory.SNOWFLAKE:
        return None
    connection = connections[using]
    table = model._meta.db_table
    if table not in connection.introspection.table_names():
        return None  # made by the recorder from its model: 64-bit
    db_type = column_types(connection, table).get(pk.column, ("", True))[0]
    return db_type if db_type.lower() in NARROW_DB_TYPES else None


def _auto(kind: type[models.Field], model: type[models.Model], column: str) -> models.Field:
    field = kind(primary_key=True)
    field.set_attributes_from_name(column)
    field.model = model
    return field


def widen_recorder(using: str) -> bool:
    """Make ``django_migrations``' key 64-bit on ``using`` (keeping its identity, serial or
    AUTO_INCREMENT) where :func:`narrow_recorder` finds it narrow; whether it did."""
    if narrow_recorder(using) is None:
        return False
    model = migration_recorder_model()
    column = model._meta.pk.column
    old = _auto(models.AutoField, model, column)
    new = _auto(models.BigAutoField, model, column)
    with connections[using].schema_editor() as editor:
        editor.alter_field(model, old, new)
    return True


def pre_migrate(*, using: str, **kwargs: Any) -> None:
    widen_recorder(using)
