"""Recovering a stream: its store resumes past the largest number in the database of the
fields the caller gives."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, NamedTuple

from django.db import models, router

from ..core.order_format import OrderNumberFormat
from ..exceptions import InvalidId
from ..inventory import column_max
from .stores import Position, RecoverArgs, get_store

__all__ = [
    "DatabasePosition",
    "database_position",
    "databases_for",
    "recover_stream",
    "resume_past",
]


def databases_for(model: type[models.Model]) -> list[str]:
    """Every database that can hold rows of ``model``: the primary, or every shard.

    A router that spreads a model over several databases says which with a method
    ``order_number_databases(model)`` returning their aliases (or ``None`` to pass);
    otherwise the model lives on ``router.db_for_write(model)``, the primary (replicas
    lag, so they are never read to decide what is safe to issue).
    """
    for each in router.routers:
        method = getattr(each, "order_number_databases", None)
        if method is not None:
            found = method(model)
            if found is not None:
                return list(dict.fromkeys(found))
    return [router.db_for_write(model)]


class DatabasePosition(NamedTuple):
    """What the database holds of a stream: the last position issued, the number issued
    there (for concealed numbers not the largest one) and each field's largest number."""

    position: Position | None
    last_number: int | None
    maxima: list[tuple[Any, int | None]]


def database_position(
    fields: Sequence[Any], fmt: OrderNumberFormat, *, using: str | None = None
) -> DatabasePosition:
    """The last position of ``fields`` (one stream's) in every database that can hold
    them (or ``using``), the number there, and the largest number of each field."""
    best: tuple[Position, int] | None = None
    maxima: list[tuple[Any, int | None]] = []
    for field in fields:
        dbs = [using] if using else databases_for(field.model)
        found = [(db, column_max(field, using=db)) for db in dbs]
        largest = max((n for _, n in found if n is not None), default=None)
        maxima.append((field, largest))
        for db, number in found:
            if number is not None:
                last = _last_of_second(field, fmt, number, db)
                best = last if best is None or last > best else best
    if best is None:
        return DatabasePosition(None, None, maxima)
    return DatabasePosition(best[0], best[1], maxima)


def _last_of_second(
    field: Any, fmt: OrderNumberFormat, largest: int, db: str
) -> tuple[Position, int]:
    """The last position issued in the column, whose largest number is ``largest``, and
    its number (for a concealed format, the largest true position of that second's rows)."""
    last = (fmt.position(largest), largest)
    if fmt.cipher is None:
        return last
    low, high = fmt.bounds_of_second(last[0][0])
    values = (
        field.model._base_manager.db_manager(db)
        .filter(**{f"{field.attname}__gte": low, f"{field.attname}__lte": high})
        .values_list(field.attname, flat=True)
    )
    for value in values.iterator(chunk_size=2000):
        try:
            last = max(last, (fmt.position(value), value))
        except InvalidId:
            continue  # not a number of this format: the audit reports it
    return last


def recover_stream(
    stream: str,
    fmt: OrderNumberFormat,
    fields: Sequence[Any],
    *,
    using: str | None = None,
    force: bool = False,
    first_sequence: int = 1,
) -> tuple[Position | None, Position]:
    """Recover the store's state of ``stream`` from its ``fields`` in the database
    (``core.order_stream.resume``): :func:`resume_past` the database's largest number."""
    position = database_position(fields, fmt, using=using).position
    return resume_past(stream, fmt, position, force=force, first_sequence=first_sequence)


def resume_past(
    stream: str,
    fmt: OrderNumberFormat,
    position: Position | None,
    *,
    force: bool = False,
    first_sequence: int = 1,
    dry_run: bool = False,
) -> tuple[Position | None, Position]:
    """Resume the store's state of ``stream`` past ``position``, the database's largest
    number; returns (before, after), and ``dry_run`` changes nothing."""
    args = RecoverArgs(
        offset=fmt.utc_offset_at(time.time()),
        first_sequence=first_sequence,
        force=force,
        dry_run=dry_run,
    )
    return get_store().recover(stream, position, args)
