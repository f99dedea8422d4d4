"""``OrderNumberField``: a readable, increasing, shard-routed number filled on insert."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from django.core import checks
from django.core.signals import setting_changed
from django.db import IntegrityError, OperationalError, connections, models, transaction
from django.db.models.signals import pre_save
from django.dispatch import receiver

from .. import inventory
from ..conf import conf
from ..core.orderformat import DecodedOrderNumber, OrderNumberFormat, zone_has_dst
from ..exceptions import LayoutError, OrderTransactionConflict
from ..fieldflags import check_shard_from, drop_generated_defaults, shard_source
from .issuer import BACKENDS, StreamIssuer, get_issuer
from .stores import is_contention

__all__ = ["OrderNumberField", "OrderNumberQuerySet", "assign_order_numbers"]

FORMAT_OPTIONS = (
    "packing",
    "sequence_bits",
    "shard_bits",
    "sequence_digits",
    "shard_digits",
    "zone",
)
_RETRY_INSTALLED = "_snowid_insert_retry"


class OrderNumberField(models.BigIntegerField):
    """``yyMMddHHmmss`` + a per-second sequence + the low bits of a user id.

    ``shard_from`` names the attribute (e.g. ``"user_id"``) whose value's low bits (or
    digits) end the number, so that orders route to the same shard as their user.
    ``stream`` names the sequence (default ``"app_label.Model.field"``); fields that share
    a stream share its sequence. Format options left at ``None`` take the
    ``SNOWID_ORDER_*`` settings.
    """

    description = "Order number (yyMMddHHmmss + sequence + shard)"

    def __init__(
        self,
        *args: Any,
        shard_from: str | None = None,
        stream: str | None = None,
        packing: str | None = None,
        sequence_bits: int | None = None,
        shard_bits: int | None = None,
        sequence_digits: int | None = None,
        shard_digits: int | None = None,
        zone: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.shard_from = shard_from
        self._stream = stream
        self.format_options = {
            "packing": packing,
            "sequence_bits": sequence_bits,
            "shard_bits": shard_bits,
            "sequence_digits": sequence_digits,
            "shard_digits": shard_digits,
            "zone": zone,
        }
        self._cached_format: tuple[int, OrderNumberFormat] | None = None
        self._cached_issuer: tuple[int, StreamIssuer] | None = None
        kwargs.setdefault("unique", True)
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)

    # -------------------------------------------------------------- format
    @property
    def format(self) -> OrderNumberFormat:
        cached = self._cached_format
        if cached is not None and cached[0] == _settings_generation[0]:
            return cached[1]
        options = {
            name: value if value is not None else conf.order_format_default(name)
            for name, value in self.format_options.items()
        }
        fmt = _format(**options)
        self._cached_format = (_settings_generation[0], fmt)
        return fmt

    @property
    def stream(self) -> str:
        return self._stream or f"{self.model._meta.label}.{self.name}"

    def decode(self, number: int | str) -> DecodedOrderNumber:
        return self.format.decode(number)

    def shard_of(self, number: int) -> int:
        """The shard a number routes to (equal to the shard of its user)."""
        return self.format.split(number)[2]

    # ------------------------------------------------------------ issuing
    def shard_value(self, instance: models.Model, fmt: OrderNumberFormat | None = None) -> int:
        if self.shard_from is None:
            return 0
        return (fmt or self.format).shard_of_user(shard_source(instance, self.shard_from))

    def _issuer(self) -> StreamIssuer:
        cached = self._cached_issuer
        if cached is not None and cached[0] == _settings_generation[0]:
            return cached[1]
        issuer = get_issuer(self.stream, self.format)
        self._cached_issuer = (_settings_generation[0], issuer)
        return issuer

    def new_number(
        self, instance: models.Model, sent_by: StreamIssuer | None = None, sent: object = None
    ) -> int:
        """A new number for ``instance``; ``sent`` is a reservation ``sent_by`` sent ahead."""
        issuer = self._issuer()
        if sent_by is not issuer:  # nothing sent ahead, or the settings changed since
            sent = None
        return issuer.next_number(self.shard_value(instance, issuer.format), sent)

    def new_numbers(self, instances: list[models.Model]) -> list[int]:
        fmt = self.format
        shards = [self.shard_value(obj, fmt) for obj in instances]
        return get_issuer(self.stream, fmt).next_numbers(shards)

    def send_ahead(self, instance: models.Model) -> None:
        """Send the reservation of ``instance``'s number before its INSERT is compiled."""
        issuer = self._issuer()
        sent = issuer.send_next()
        if sent is not None:
            _sent_ahead.put(instance, self, issuer, sent)

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        value = getattr(model_instance, self.attname)
        if add and value is None:
            value = self.new_number(model_instance, *_sent_ahead.take(model_instance, self))
            setattr(model_instance, self.attname, value)
        return value

    # ----------------------------------------------------- model wiring
    def contribute_to_class(
        self, cls: type[models.Model], name: str, private_only: bool = False
    ) -> None:
        super().contribute_to_class(cls, name, private_only=private_only)
        if cls._meta.abstract:
            return
        inventory.register(self, "order")
        if getattr(cls, _RETRY_INSTALLED, None) is not cls:
            _install_insert_retry(cls)

    # ------------------------------------------------------ migrations
    def deconstruct(self) -> tuple[str, str, Sequence[Any], dict[str, Any]]:
        name, path, args, kwargs = super().deconstruct()
        path = "django_snowid.fields.OrderNumberField"
        drop_generated_defaults(kwargs)
        if self.shard_from is not None:
            kwargs["shard_from"] = self.shard_from
        if self._stream is not None:
            kwargs["stream"] = self._stream
        kwargs.update({k: v for k, v in self.format_options.items() if v is not None})
        return name, path, args, kwargs

    # ---------------------------------------------------------- checks
    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        return [
            *super().check(**kwargs),
            *check_shard_from(self, self.shard_from),
            *self._check_format(),
        ]

    def _error(self, msg: str, id_: str) -> checks.Error:
        hint = f"See the README section 'System checks', {id_}."
        return checks.Error(msg, hint=hint, obj=self, id=id_)

    def _check_format(self) -> list[checks.CheckMessage]:
        try:
            fmt = self.format
        except (LayoutError, TypeError) as exc:
            return [self._error(f"Invalid order-number format: {exc}", "django_snowid.E202")]
        errors: list[checks.CheckMessage] = []
        if zone_has_dst(fmt.zone) and not conf.ORDER_ALLOW_DST:
            errors.append(
                self._error(
                    f"The order-number zone {fmt.zone!r} has daylight saving: its wall clock "
                    "repeats an hour at fall-back, so stems would go backwards. Use a zone "
                    "without DST (UTC), or set SNOWID_ORDER_ALLOW_DST = True to accept that "
                    "numbers continue from the last one through the repeated hour.",
                    "django_snowid.E203",
                )
            )
        from .issuer import stream_fields

        for other in stream_fields(self.stream):
            if other is not self and other.format != fmt:
                errors.append(
                    self._error(
                        f"Stream {self.stream!r} is shared with {other.model._meta.label}."
                        f"{other.name}, which uses another format: one stream, one format.",
                        "django_snowid.E204",
                    )
                )
        return errors


@functools.lru_cache(maxsize=64)
def _format(**options: Any) -> OrderNumberFormat:
    return OrderNumberFormat(**options)


# Bumped whenever a SNOWID_* setting (or CACHES) changes, so that fields rebuild their
# format and look up their issuer again.
_settings_generation = [0]


@receiver(setting_changed)
def _new_settings_generation(*, setting: str, **kwargs: object) -> None:
    # CACHES too: the issuers (and their Redis store) are rebuilt when it changes.
    if setting.startswith("SNOWID_") or setting == "CACHES":
        _settings_generation[0] += 1


class _SentAhead(threading.local):
    """Reservations sent when a save started, waiting for their field's ``pre_save()``.

    Per thread: the signal and the INSERT of one save run in the same thread. An entry
    whose save failed in between is never taken; its number is a gap. The newest
    ``LIMIT`` entries are kept, so such leftovers cannot pile up.
    """

    LIMIT = 16

    def __init__(self) -> None:
        self.entries: list[tuple[models.Model, OrderNumberField, StreamIssuer, object]] = []

    def put(
        self, instance: models.Model, field: OrderNumberField, issuer: StreamIssuer, sent: object
    ) -> None:
        entries = self.entries
        if entries:
            self.take(instance, field)  # the same save tried again: its earlier number is a gap
            del entries[: 1 - self.LIMIT]
        entries.append((instance, field, issuer, sent))

    def take(
        self, instance: models.Model, field: OrderNumberField
    ) -> tuple[StreamIssuer | None, object]:
        for index, (their_instance, their_field, issuer, sent) in enumerate(self.entries):
            if their_instance is instance and their_field is field:
                del self.entries[index]
                return issuer, sent
        return None, None


_sent_ahead = _SentAhead()
_ORDER_FIELDS = "_snowid_order_fields"


@receiver(pre_save, dispatch_uid="django_snowid.send_order_numbers_ahead")
def _send_order_numbers_ahead(
    sender: type[models.Model],
    instance: models.Model,
    raw: bool,
    update_fields: Any = None,
    **kwargs: Any,
) -> None:
    """Start reserving a new row's order numbers when its ``save()`` starts.

    The Redis round trip then overlaps Django's work up to the INSERT, where the
    field's ``pre_save()`` reads the reply. Stores without that ability (the database
    store), and every store with ``SNOWID_ORDER_SEND_AHEAD = False``, issue in
    ``pre_save()`` instead.
    """
    fields = sender.__dict__.get(_ORDER_FIELDS)
    if fields is None:
        # Cached in the class's own namespace: a subclass computes its own.
        fields = tuple(f for f in sender._meta.concrete_fields if isinstance(f, OrderNumberField))
        setattr(sender, _ORDER_FIELDS, fields)
    if not fields or raw or update_fields is not None or not instance._state.adding:
        return
    for field in fields:
        if getattr(instance, field.attname) is None:
            field.send_ahead(instance)


def conflicting_fields(
    exc: IntegrityError, using: str, fields: Sequence[OrderNumberField]
) -> list[OrderNumberField]:
    """Which of ``fields`` the failed INSERT hit the UNIQUE constraint of.

    Told by the error itself (the constraint PostgreSQL names, the key MySQL/MariaDB
    names, the column SQLite names), never by a read of the table: under REPEATABLE
    READ or SERIALIZABLE a read sees the transaction's snapshot, which may not hold the
    row the INSERT ran into.
    """
    connection = connections[using]
    cause = exc.__cause__ or exc
    text = str(exc)
    diag = getattr(cause, "diag", None)
    named = getattr(diag, "constraint_name", None)
    if named is None and connection.vendor == "mysql":
        found = re.search(r"for key '([^']+)'", text)
        named = found and found.group(1).rsplit(".", 1)[-1]
    hit: list[OrderNumberField] = []
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
        connection = connections[using]
        with connection.cursor() as cursor:
            constraints = connection.introspection.get_constraints(cursor, table)
        names = _constraint_names[key] = frozenset(
            name for name, c in constraints.items() if c["unique"] and c["columns"] == [column]
        )
    return names


def _retry_or_raise(exc: Exception, using: str, fields: Sequence[OrderNumberField]) -> list[Any]:
    """The order fields to draw again after ``exc``, or raise: the retry decision of
    ``save()`` and ``bulk_create()`` alike.

    A UNIQUE conflict on an order number means the store issued it again (it lost
    acknowledged writes): the stream recovers from the database, past everything in
    flight, before it draws again. A deadlock or serialization failure in a transaction
    of its own is tried again; inside the caller's it becomes ours, nothing written.
    """
    if isinstance(exc, IntegrityError):
        hit = conflicting_fields(exc, using, fields)
        if not hit:
            raise exc
    elif is_contention(exc):
        if transaction.get_connection(using).in_atomic_block:
            raise OrderTransactionConflict(
                f"The database {using!r} reported a deadlock, a lock timeout or a "
                f"serialization failure on an INSERT with an order number: {exc}. Nothing was "
                "written; roll back and run the transaction again."
            ) from exc
        return list(fields)  # the store is fine: new numbers, no recovery
    else:
        raise exc
    for field in hit:
        field._issuer().recover(force=True)
    return hit


def _install_insert_retry(model: type[models.Model]) -> None:
    """Let the database be the last line of defence for the model's order numbers.

    If an INSERT fails on the UNIQUE constraint of an order-number column (a store that
    lost acknowledged writes, say after a Redis failover), recover the stream, draw new
    numbers and retry inside a savepoint, a bounded number of times. ``Model._do_insert``
    is the one place that wraps exactly the INSERT; nothing else is changed. Outside a
    transaction a failed INSERT leaves nothing behind, so no savepoint (and no extra
    round trip) is needed there.
    """
    # Model._do_insert is private API (stable since Django 1.x), absent from type stubs.
    original: Callable[..., Any] = model._do_insert  # type: ignore[assignment]

    def _do_insert(self: models.Model, manager: Any, using: str, fields: Any, *args: Any) -> Any:
        order_fields = [f for f in fields if isinstance(f, OrderNumberField)]
        if not order_fields:  # another table of a multi-table model
            return original(self, manager, using, fields, *args)
        attempt = 0
        while True:
            try:
                if not transaction.get_connection(using).in_atomic_block:
                    return original(self, manager, using, fields, *args)
                with transaction.atomic(using=using, savepoint=True):
                    return original(self, manager, using, fields, *args)
            except (IntegrityError, OperationalError) as exc:
                if attempt >= int(conf.ORDER_INSERT_RETRIES):
                    raise
                for field in _retry_or_raise(exc, using, order_fields):
                    setattr(self, field.attname, field.new_number(self))
                attempt += 1

    model._do_insert = _do_insert  # type: ignore[attr-defined]
    setattr(model, _RETRY_INSTALLED, model)


def assign_order_numbers(objs: list[models.Model]) -> list[models.Model]:
    """Fill the empty order numbers of ``objs`` in blocks (one round trip per block).

    A block's numbers increase; numbers other processes issue meanwhile may fall between
    them, so across processes they are unique but not strictly increasing.
    """
    _assign(objs)
    return objs


def _assign(
    objs: list[models.Model], only: Sequence[OrderNumberField] | None = None
) -> dict[OrderNumberField, list[models.Model]]:
    """Fill the empty numbers; return, per field, the objects that got one."""
    filled: dict[OrderNumberField, list[models.Model]] = {}
    if not objs:
        return filled
    for field in type(objs[0])._meta.concrete_fields:
        if isinstance(field, OrderNumberField) and (only is None or field in only):
            empty = [obj for obj in objs if getattr(obj, field.attname) is None]
            for obj, number in zip(empty, field.new_numbers(empty), strict=True):
                setattr(obj, field.attname, number)
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
                with transaction.atomic(using=self.db, savepoint=True):
                    return super().bulk_create(objs, *args, **kwargs)
            except (IntegrityError, OperationalError) as exc:
                if attempt >= int(conf.ORDER_INSERT_RETRIES) or not filled:
                    raise
                hit = _retry_or_raise(exc, self.db, list(filled))
                for field in hit:
                    for obj in filled[field]:
                        setattr(obj, field.attname, None)
                filled.update(_assign(objs, only=hit))
                attempt += 1


def check_backend() -> list[checks.CheckMessage]:
    if conf.ORDER_BACKEND not in BACKENDS:
        return [
            checks.Error(
                f"SNOWID_ORDER_BACKEND is {conf.ORDER_BACKEND!r}; "
                f"expected one of {list(BACKENDS)}.",
                hint="See the README section 'System checks', django_snowid.E205.",
                id="django_snowid.E205",
            )
        ]
    return []
