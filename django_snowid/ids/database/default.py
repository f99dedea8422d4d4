"""The column default of a field with ``database_ids=True``: ``db_default`` (Django 5.0+)
set to an expression that calls the geometry's function on PostgreSQL.

Migrations write the geometry's key, so a layout whose bits change makes a new
``AlterField`` (``ALTER COLUMN ... SET DEFAULT`` the new function). Other backends get
``NULL`` (no default): the system checks refuse the option there (E602, E603), and the
column is filled in Python as always.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils.deconstruct import deconstructible

from .geometry import Geometry

__all__ = ["SnowflakeDefault"]


@deconstructible(path="django_snowid.ids.database.default.SnowflakeDefault")
class SnowflakeDefault(models.Expression):
    """``snowid_next_id_<geometry>()`` on PostgreSQL; ``NULL`` elsewhere."""

    # May be a column default (Django's check of db_default expressions).
    allowed_default = True

    def __init__(self, geometry: str) -> None:
        super().__init__(output_field=models.BigIntegerField())
        self.geometry = Geometry.from_key(geometry)

    def __repr__(self) -> str:
        return f"SnowflakeDefault({self.geometry.key!r})"

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        return "NULL", []

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        return f"{self.geometry.function}()", []
