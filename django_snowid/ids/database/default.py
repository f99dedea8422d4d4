"""The ``db_default`` of a field with ``database_ids=True``: a call of the geometry's
function on PostgreSQL (by its key, which migrations write), ``NULL`` elsewhere."""

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
