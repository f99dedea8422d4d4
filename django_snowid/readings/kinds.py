"""Readings: a way to read a value (a layout or an order-number format), a class per kind."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from datetime import time as time_of_day
from typing import Any, ClassVar

from .. import inventory
from ..adopt.journal import legacy_boundary
from ..core.layout import DecodedId, Layout
from ..core.order_format import STEM_DIGITS, DecodedOrderNumber, OrderNumberFormat
from ..exceptions import InvalidId, LayoutError
from ..inventory import Kind, field_label
from ..settings_layouts import DEFAULT, get_layout, layout_names
from .rows import DecodedRow, Segment

__all__ = [
    "OrderReading",
    "Reading",
    "SnowflakeReading",
    "field_reading",
    "layout_reading",
    "order_bits",
    "order_digits",
    "readings_of",
    "snowflake_bits",
]

_Y2000 = datetime(2000, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Reading:
    """A way to read a value, with the fields that store it and its earliest plausible time."""

    label: str
    decode: Callable[[int], Any]
    fields: tuple[Any, ...]
    earliest: datetime = _Y2000

    kind: ClassVar[Kind]
    what: ClassVar[str]  # "a Snowflake id"
    milliseconds: ClassVar[bool]  # the precision of its times

    def __init_subclass__(cls, *, kind: Kind, what: str, milliseconds: bool = True) -> None:
        cls.kind, cls.what, cls.milliseconds = kind, what, milliseconds

    def fill(self, row: DecodedRow, decoded: Any) -> None:
        row.kind = self.kind
        row.decoded = decoded
        row.time_utc = decoded.time

    def name(self, holder_labels: list[str]) -> str:
        """What a row read this way is called, given the fields whose rows hold it."""
        return self.label

    def legacy(self, row: DecodedRow) -> bool:
        """Mark ``row`` a legacy value and say so, when it is one."""
        return False


def _bits(value: int, widths: list[tuple[str, int, int | str]]) -> list[Segment]:
    segments, shift = [], 64
    for index, (name, width, part_value) in enumerate(w for w in widths if w[1]):
        shift -= width
        cells = format((value >> shift) & ((1 << width) - 1), f"0{width}b")
        segments.append(Segment(name, part_value, cells, index, shift + width - 1, shift))
    return segments


def _tick_unit(layout: Layout) -> str:
    return "ms" if layout.time_unit_ms == 1 else f"{layout.time_unit_ms} ms"


def _tick_label(layout: Layout) -> str:
    """The name of an id's time part with its unit and origin ("time (ms since 2020-01-01)")."""
    epoch = layout.epoch.astimezone(timezone.utc)
    origin = (
        f"{epoch:%Y-%m-%d}" if epoch.time() == time_of_day() else f"{epoch:%Y-%m-%d %H:%M:%S} UTC"
    )
    unit = _tick_unit(layout)
    return (
        f"time ({unit} since {origin})"
        if unit == "ms"
        else f"time (units of {unit} since {origin})"
    )


def snowflake_bits(decoded: DecodedId) -> list[Segment]:
    layout = decoded.layout
    return _bits(
        decoded.value,
        [
            ("sign", 1, 0),
            ("unused", 63 - layout.total_bits, 0),
            (f"time ({_tick_unit(layout)})", layout.time_bits, decoded.tick),
            *((p.name, p.bits, decoded.parts[p.name]) for p in layout.node_parts),
            ("sequence", layout.sequence_bits, decoded.sequence),
            ("shard", layout.shard_bits, decoded.shard),
        ],
    )


SHOWN = "sequence shown (concealed)"


def _sequence_part(width: int, decoded: DecodedOrderNumber) -> tuple[str, int, int]:
    shown = decoded.visible_sequence
    return ("sequence", width, decoded.sequence) if shown is None else (SHOWN, width, shown)


def order_bits(decoded: DecodedOrderNumber) -> list[Segment]:
    fmt = decoded.format
    if fmt.packing != "binary":
        return _bits(decoded.value, [("sign", 1, 0), ("value", 63, decoded.value)])
    used = 40 + fmt.sequence_bits + fmt.shard_bits
    return _bits(
        decoded.value,
        [
            ("sign", 1, 0),
            ("unused", 63 - used, 0),
            ("stem", 40, f"{decoded.stem:012d}"),
            _sequence_part(fmt.sequence_bits, decoded),
            ("shard", fmt.shard_bits, decoded.shard),
        ],
    )


def order_digits(decoded: DecodedOrderNumber) -> list[Segment]:
    fmt = decoded.format
    if fmt.packing != "decimal":
        return []
    check = 1 if fmt.check_digit else 0
    text = str(decoded.value).zfill(12 + fmt.sequence_digits + fmt.shard_digits + check)
    stem, rest = text[:12], text[12 : len(text) - check]
    sequence, shard = rest[: fmt.sequence_digits], rest[fmt.sequence_digits :]
    segments = [
        Segment("stem", stem, stem, 2),
        Segment(_sequence_part(0, decoded)[0], int(sequence), sequence, 3),
        Segment("shard", int(shard), shard, 4),
    ]
    if check:
        segments.append(Segment("check digit", int(text[-1]), text[-1], 5))
    return segments


class SnowflakeReading(Reading, kind=inventory.SNOWFLAKE, what="a Snowflake id"):
    def fill(self, row: DecodedRow, decoded: DecodedId) -> None:
        super().fill(row, decoded)
        row.parts = [
            (_tick_label(decoded.layout), decoded.tick),
            *decoded.parts.items(),
            ("sequence", decoded.sequence),
            *((("shard", decoded.shard),) if decoded.layout.shard_bits else ()),
        ]
        row.bits = snowflake_bits(decoded)
        row.node_text = " ".join(f"{k}={v}" for k, v in decoded.parts.items())
        row.counter_text = f"sequence {decoded.sequence}"

    def legacy(self, row: DecodedRow) -> bool:
        """A value below the first Snowflake id of its adopted model is a legacy id."""
        for held in [h.field for h in row.holders] or self.fields:
            if not held.primary_key:
                continue
            boundary = legacy_boundary(held.model)
            if boundary is not None and row.value < boundary:
                row.kind, row.time_utc, row.parts, row.bits = "legacy", None, [], []
                row.reading = f"legacy id of {held.model._meta.label}"
                row.note = (
                    "legacy id, from before Snowflake ids were adopted "
                    f"({held.model._meta.label}: ids below {boundary})"
                )
                return True
        return False


@dataclass(frozen=True)
class OrderReading(Reading, kind=inventory.ORDER, what="an order number", milliseconds=False):
    format: OrderNumberFormat | None = None

    def mistyped(self, value: int) -> DecodedOrderNumber | None:
        """The number ``value`` would be with its failed check digit corrected, or ``None``
        (also for a value of another length than this format's numbers)."""
        fmt = self.format
        if fmt is None or fmt.check_digit is None:
            return None
        if len(str(value)) != STEM_DIGITS + fmt.sequence_digits + fmt.shard_digits + 1:
            return None
        try:
            decoded: DecodedOrderNumber = fmt.decode(fmt.with_check_digit(value // 10))
        except InvalidId:
            return None
        return decoded

    def fill(self, row: DecodedRow, decoded: DecodedOrderNumber) -> None:
        super().fill(row, decoded)
        shown = decoded.visible_sequence
        row.parts = [
            ("stem", f"{decoded.stem:012d}"),
            ("sequence", decoded.sequence),
            *(() if shown is None else ((SHOWN, shown),)),
            ("shard", decoded.shard),
        ]
        row.bits = order_bits(decoded)
        row.digits = order_digits(decoded)
        true = "" if shown is None else f" (true position; shown as {shown})"
        row.counter_text = f"sequence {decoded.sequence}{true} / shard {decoded.shard}"
        row.shard_text = str(decoded.shard)

    def name(self, holder_labels: list[str]) -> str:
        """A format is shared by fields: the one(s) whose row holds the value."""
        return ", ".join(holder_labels) or self.label


def field_reading(field: Any) -> Reading:
    """The reading of one field of ours."""
    if inventory.kind_of(field) is inventory.ORDER:
        return OrderReading(field_label(field), field.decode, (field,), format=field.format)
    return SnowflakeReading(field_label(field), field.decode, (field,))


def layout_reading(layout: Layout, names: list[str], fields: list[Any]) -> Reading:
    """The reading of the layout called ``names``, with the fields among ``fields`` using it."""
    label = ", ".join(f"“{name}”" for name in names)
    label = f"Snowflake layout{'s' if len(names) > 1 else ''} {label}"
    ours = tuple(
        f
        for f in fields
        if inventory.kind_of(f) is inventory.SNOWFLAKE and (f.layout_name or DEFAULT) in names
    )
    return SnowflakeReading(label, layout.decode, ours, layout.epoch)


def readings_of(fields: list[Any]) -> list[Reading]:
    """Every reading of the project: per layout (default first), then per order format."""

    names: dict[Layout, list[str]] = {}
    for name in layout_names():
        try:
            names.setdefault(get_layout(name), []).append(name)
        except LayoutError:
            continue  # E003 says why
    formats: dict[OrderNumberFormat, list[Any]] = {}
    for each in fields:
        if inventory.kind_of(each) is inventory.ORDER:
            try:
                formats.setdefault(each.format, []).append(each)
            except LayoutError:
                continue  # E202 says why
    return [
        *(layout_reading(layout, of, fields) for layout, of in names.items()),
        *(
            OrderReading(", ".join(map(field_label, of)), fmt.decode, tuple(of), format=fmt)
            for fmt, of in formats.items()
        ),
    ]
