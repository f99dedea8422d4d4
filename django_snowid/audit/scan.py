"""Reading a column in batches with bounded memory (keyset pagination on its index), and
several columns as one sorted run."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

from django.db import models, router

__all__ = ["column_batches", "column_values", "merged_values"]

#: (value, field, pk) of one row.
Row = tuple[int, models.Field, Any]
#: (value, pk) of rows read together, in the column's order.
Batch = list[tuple[int, Any]]
_value, _pk = itemgetter(0), itemgetter(1)


def column_batches(
    field: models.Field, *, batch_size: int, using: str | None = None
) -> Iterator[Batch]:
    """What :func:`column_values` reads, a batch at a time."""
    model = field.model
    alias = using or router.db_for_read(model)
    column = field.attname
    rows = (
        model._base_manager.db_manager(alias)
        .filter(**{f"{column}__isnull": False})
        .values_list(column, "pk")
    )
    if field.unique or field.primary_key:
        rows = rows.order_by(column)
    else:  # a column that may repeat a value: continue past (value, pk), not value alone
        rows = rows.order_by(column, "pk")
    last: tuple[Any, Any] | None = None
    while True:
        if last is None:
            page = rows
        elif field.unique or field.primary_key:
            page = rows.filter(**{f"{column}__gt": last[0]})
        else:
            page = rows.filter(
                models.Q(**{f"{column}__gt": last[0]})
                | models.Q(**{column: last[0], "pk__gt": last[1]})
            )
        batch = list(page[:batch_size])
        if batch:
            yield batch
        if len(batch) < batch_size:
            return
        last = batch[-1]


def column_values(
    field: models.Field, *, batch_size: int, using: str | None = None
) -> Iterator[tuple[int, Any]]:
    """(value, pk) of every row whose ``field`` is set, in the column's order."""
    return chain.from_iterable(column_batches(field, batch_size=batch_size, using=using))


def merged_values(
    fields: Iterable[models.Field],
    *,
    batch_size: int,
    using: str | None = None,
    read: Callable[[models.Field, Batch], Batch] | None = None,
) -> Iterator[Row]:
    """(value, field, pk) of every field's rows in one run by value; ``read`` filters batches."""
    runs = [_tagged(each, batch_size, using, read) for each in fields]
    if len(runs) == 1:
        return runs[0]
    return heapq.merge(*runs, key=_value)


def _tagged(
    field: models.Field,
    batch_size: int,
    using: str | None,
    read: Callable[[models.Field, Batch], Batch] | None,
) -> Iterator[Row]:
    batches = column_batches(field, batch_size=batch_size, using=using)
    if read is not None:
        batches = (read(field, batch) for batch in batches)
    # Rows tagged without a Python call per row.
    return chain.from_iterable(zip(map(_value, b), repeat(field), map(_pk, b)) for b in batches)
