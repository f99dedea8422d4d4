"""Order numbers in blocks: ``OrderNumberQuerySet.bulk_create`` and ``assign_order_numbers``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, OperationalError, models, transaction

from ..conf import conf
from .retry import OrderField, order_fields, retry_or_raise

__all__ = ["OrderNumberQuerySet", "assign_order_numbers"]


def assign_order_numbers(objs: list[models.Model]) -> list[models.Model]:
    """Fill the empty order numbers of ``objs`` in blocks (one round trip per block).

    A block's numbers increase; numbers other processes issue meanwhile may fall between
    them, so across processes they are unique but not strictly increasing.
    """
    _assign(objs)
    return objs


def _assign(
    objs: list[models.Model], only: Sequence[OrderField] | None = None
) -> dict[OrderField, list[models.Model]]:
    """Fill the empty numbers; return, per field, the objects that got one."""
    filled: dict[OrderField, list[models.Model]] = {}
    if not objs:
        return filled
    for field in order_fields(type(objs[0])):
        if only is None or field in only:
            attname = field.attname
            empty = [obj for obj in objs if getattr(obj, attname) is None]
            if empty:
                for obj, number in zip(empty, field.new_numbers(empty), strict=True):
                    setattr(obj, attname, number)
            filled[field] = empty
    return filled


class OrderNumberQuerySet(models.QuerySet):
    """``bulk_create()`` that reserves order numbers in blocks instead of one per row.

    All or nothing: the rows are written in a savepoint (a transaction in autocommit);
    an INSERT that hits the UNIQUE column of a number it drew recovers the stream and
    writes the whole set again with new numbers (``SNOWID_ORDER_INSERT_RETRIES``
    times); any other failure writes none of them.

    Use it as ``objects = OrderNumberQuerySet.as_manager()``.
    """

    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> list[Any]:
        objs = list(objs)
        filled = _assign(objs)
        attempt = 0
        while True:
            try:
                if transaction.get_autocommit(self.db):  # bulk_create's own transaction
                    return super().bulk_create(objs, *args, **kwargs)
                with transaction.atomic(using=self.db, savepoint=True):
                    return super().bulk_create(objs, *args, **kwargs)
            except (IntegrityError, OperationalError) as exc:
                if attempt >= int(conf.ORDER_INSERT_RETRIES) or not filled:
                    raise
                hit = retry_or_raise(exc, self.db, list(filled))
                for field in hit:
                    for obj in filled[field]:
                        setattr(obj, field.attname, None)
                filled.update(_assign(objs, only=hit))
                attempt += 1
