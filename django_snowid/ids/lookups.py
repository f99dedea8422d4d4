"""Lookups by creation time that compile to a range on the id column (its index serves)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db.models import lookups

from ..adopt.journal import legacy_boundary
from ..core.layout import Layout
from ..db.private import operator_sql
from ..exceptions import LayoutError

__all__ = ["LOOKUPS", "CreatedAfter", "CreatedBefore", "CreatedRange"]


def _moment(value: object, name: str) -> datetime:
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise LayoutError(
            f"__{name} takes an aware datetime, not {value!r}: a naive one would be read "
            "in an arbitrary zone."
        )
    return value


class _CreatedLookup:
    lookup_name: str
    lhs: Any

    @property
    def layout(self) -> Layout:
        return self.lhs.output_field.layout

    def first_id(self, value: object) -> int:
        """The smallest id issued at or after ``value``."""
        return self.layout.min_id_at(_moment(value, self.lookup_name))

    def boundary(self) -> int | None:
        """Where the legacy ids of an adopted model end (their creation time is unknown)."""
        field = self.lhs.output_field
        if not field.primary_key:
            return None
        return legacy_boundary(field.model)


class CreatedAfter(_CreatedLookup, lookups.GreaterThanOrEqual):
    """``field__created_after=moment``: ids issued at or after ``moment`` (its tick)."""

    lookup_name = "created_after"

    def get_prep_lookup(self) -> Any:
        return max(self.first_id(self.rhs), self.boundary() or 0)

    def get_rhs_op(self, connection: Any, rhs: str) -> str:
        return operator_sql(connection, "gte", rhs)  # keyed by the built-in lookup's name


class CreatedBefore(_CreatedLookup, lookups.LessThan):
    """``field__created_before=moment``: ids issued before ``moment``'s tick."""

    lookup_name = "created_before"

    def get_prep_lookup(self) -> Any:
        return self.first_id(self.rhs)

    def as_sql(self, compiler: Any, connection: Any) -> Any:
        boundary = self.boundary()
        if boundary is not None and self.rhs <= boundary:
            raise EmptyResultSet  # before the switch: legacy rows' times are unknown
        return super().as_sql(compiler, connection)

    def get_rhs_op(self, connection: Any, rhs: str) -> str:
        return operator_sql(connection, "lt", rhs)


class CreatedRange(_CreatedLookup, lookups.Range):
    """``field__created_range=(start, end)``: ids issued in ``[start, end)``."""

    lookup_name = "created_range"

    def get_prep_lookup(self) -> Any:
        start, end = self.rhs
        return (max(self.first_id(start), self.boundary() or 0), self.first_id(end) - 1)


LOOKUPS = (CreatedAfter, CreatedBefore, CreatedRange)
