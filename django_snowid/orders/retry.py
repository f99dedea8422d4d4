"""The INSERT of a row with order numbers, retried when it fails on an order number's
UNIQUE constraint (new numbers, in a savepoint inside a transaction) or on contention in
a transaction of its own. Each concrete model with an order-number field gets its
``_do_insert`` wrapped once (docs "Orders" says why that private method)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from django.db import IntegrityError, OperationalError, connections, models, transaction

from ..conf import conf
from ..db.errors import is_contention
from ..db.private import unique_constraints, wrap_insert
from ..exceptions import OrderTransactionConflict
from .issuer import StreamIssuer

__all__ = [
    "OrderField",
    "conflicting_fields",
    "install_insert_retry",
    "order_fields",
    "retry_or_raise",
]

_OWN = "_snowid_retried_order_fields"


class OrderField(Protocol):
    """What the retry needs of an order-number field (it never imports the field)."""

    attname: str
    column: str
    model: type[models.Model]

    def issuer(self) -> StreamIssuer: ...

    def new_number(self, instance: models.Model) -> int: ...

    def new_numbers(self, instances: list[models.Model]) -> list[int]: ...


def order_fields(model: type[models.Model]) -> list[OrderField]:
    """The order-number fields of ``model``'s own table (of its concrete model)."""
    fields: list[OrderField] = model._meta.concrete_model.__dict__.get(_OWN, [])
    return fields


def install_insert_retry(model: type[models.Model], field: OrderField) -> None:
    """Called by an order-number field when it is added to the concrete ``model``."""
    own: list[OrderField] | None = model.__dict__.get(_OWN)
    if own is not None:  # a second order-number field: the wrapper is there already
        own.append(field)
        return
    own = [field]
    setattr(model, _OWN, own)

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def _do_insert(
            self: models.Model, manager: Any, using: str, fields: Any, *args: Any
        ) -> Any:
            if manager.model is not model:  # another table of a multi-table model
                return original(self, manager, using, fields, *args)
            attempt = 0
            while True:
                try:
                    if _autocommit(connections[using]):
                        return original(self, manager, using, fields, *args)
                    with transaction.atomic(using=using, savepoint=True):
                        return original(self, manager, using, fields, *args)
                except (IntegrityError, OperationalError) as exc:
                    if attempt >= int(conf.ORDER_INSERT_RETRIES):
                        raise
                    for each in retry_or_raise(exc, using, own):
                        setattr(self, each.attname, each.new_number(self))
                    attempt += 1

        return _do_insert

    wrap_insert(model, wrap)


def _autocommit(connection: Any) -> bool:
    if connection.connection is None:
        return bool(connection.get_autocommit())
    return bool(connection.autocommit)


def conflicting_fields(
    exc: IntegrityError, using: str, fields: Sequence[OrderField]
) -> list[OrderField]:
    """Which of ``fields`` the failed INSERT hit the UNIQUE constraint of, told by the
    error itself (never by a read a snapshot could fool)."""
    connection = connections[using]
    cause = exc.__cause__ or exc
    text = str(exc)
    diag = getattr(cause, "diag", None)
    named = getattr(diag, "constraint_name", None)
    if named is None and connection.vendor == "mysql":
        found = re.search(r"for key '([^']+)'", text)
        named = found and found.group(1).rsplit(".", 1)[-1]
    hit: list[OrderField] = []
    for field in fields:
        table = field.model._meta.db_table
        if connection.vendor == "sqlite":
            failed = text.partition("UNIQUE constraint failed:")[2]
            if [c.strip() for c in failed.split(",")] == [f"{table}.{field.column}"]:
                hit.append(field)
        elif named and named in _unique_constraints(using, table, field.column):
            hit.append(field)
    return hit


_constraint_names: dict[tuple[str, str, str], frozenset[str]] = {}


def _unique_constraints(using: str, table: str, column: str) -> frozenset[str]:
    """The names of the UNIQUE constraints of exactly ``column`` (read once per process)."""
    key = (using, table, column)
    names = _constraint_names.get(key)
    if names is None:
        names = _constraint_names[key] = unique_constraints(connections[using], table, column)
    return names


def retry_or_raise(exc: Exception, using: str, fields: Sequence[OrderField]) -> list[OrderField]:
    """The order fields to draw again after ``exc`` (the stream recovered first), or raise:
    the retry decision of ``save()`` and ``bulk_create()`` alike."""
    if isinstance(exc, IntegrityError):
        hit = conflicting_fields(exc, using, fields)
        if not hit:
            raise exc
    elif is_contention(exc):
        if not transaction.get_autocommit(using):
            raise OrderTransactionConflict(
                f"The database {using!r} reported a deadlock, a lock timeout or a "
                f"serialization failure on an INSERT with an order number: {exc}. Nothing was "
                "written; roll back and run the transaction again."
            ) from exc
        return list(fields)  # the store is fine: new numbers, no recovery
    else:
        raise exc
    for field in hit:
        field.issuer().recover(force=True)
    return hit
