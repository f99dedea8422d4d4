"""Reading pasted ids for people: which reading, why, every part, and a bit diagram.

Used by the admin's decode page and its model-admin panels; no HTTP here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from datetime import time as time_of_day
from typing import Any

from django.db import models
from django.utils import timezone as dj_timezone

from . import inventory
from .adopt.journal import legacy_boundary
from .core.digits import parse_digits
from .core.echo import shown
from .core.layout import DecodedId, Layout
from .core.order_format import DecodedOrderNumber, OrderNumberFormat
from .exceptions import CheckDigitMismatch, InvalidId, LayoutError, SnowidError
from .inventory import field_label, get_field
from .layouts import get_layout, layout_names

__all__ = [
    "DecodedRow",
    "Holder",
    "Segment",
    "decode_tokens",
    "parse_token",
    "reading_choices",
    "time_texts",
]

PLAUSIBLE_FUTURE = timedelta(days=1)


@dataclass(frozen=True)
class Segment:
    """A run of bits (or digits) of one part, for the diagram."""

    name: str
    value: int | str
    cells: str  # "0101..." or the digits
    index: int  # the part's colour
    high: int = -1  # the number of its first (most significant) bit, -1 for digits
    low: int = -1


@dataclass(frozen=True)
class Holder:
    """A row that holds a decoded value: a field of ours and the row's primary key."""

    field: Any
    pk: Any

    @property
    def label(self) -> str:
        return field_label(self.field)


@dataclass
class DecodedRow:
    raw: str
    error: str = ""
    kind: str = ""  # "snowflake" or "order"
    reading: str = ""  # what it was read as
    why: str = ""
    value: int = 0
    parts: list[tuple[str, Any]] = field(default_factory=list)
    time_utc: datetime | None = None
    created_utc: str = ""  # "2026-01-02 03:04:05.678" (ids) or "... 03:04:05" (order numbers)
    created_local: str = ""  # the same instant on the site's clock (TIME_ZONE)
    zone: str = ""  # the site's zone, for the label
    decoded: Any = None  # the DecodedId or DecodedOrderNumber

    @property
    def site_time_differs(self) -> bool:
        """The site's clock reads otherwise than UTC: worth a line of its own."""
        return self.created_local != self.created_utc

    @property
    def node_text(self) -> str:
        """The node parts of an id ("datacenter=1 worker=3"); order numbers have none."""
        if isinstance(self.decoded, DecodedId):
            return " ".join(f"{k}={v}" for k, v in self.decoded.parts.items())
        return ""

    @property
    def counter_text(self) -> str:
        if isinstance(self.decoded, DecodedOrderNumber):
            shown = self.decoded.visible_sequence
            true = "" if shown is None else f" (true position; shown as {shown})"
            return f"sequence {self.decoded.sequence}{true} / shard {self.decoded.shard}"
        if isinstance(self.decoded, DecodedId):
            return f"sequence {self.decoded.sequence}"
        return ""

    def as_record(self) -> dict[str, str]:
        """What the page shows of this row, as strings (ids too: JSON readers parse
        numbers as doubles), for the CSV and JSON exports."""
        decoded = self.decoded
        return {
            "value": self.raw,
            "error": self.error,
            "reading": self.reading,
            "created_utc": self.created_utc,
            "created_site_time": self.created_local,
            "site_time_zone": self.zone,
            "node": self.node_text,
            "sequence": "" if decoded is None else str(decoded.sequence),
            "shard": str(decoded.shard) if isinstance(decoded, DecodedOrderNumber) else "",
            "link": self.link,
            "other_readings": "; ".join(self.alternatives),
        }

    age: timedelta | None = None
    bits: list[Segment] = field(default_factory=list)
    digits: list[Segment] = field(default_factory=list)
    holders: list[Holder] = field(default_factory=list)  # rows that hold it, in this reading
    links: list[tuple[str, str]] = field(default_factory=list)  # (what, URL) of those rows
    link: str = ""  # the first of them
    alternatives: list[str] = field(default_factory=list)  # other readings, when detected


def reading_choices() -> list[tuple[str, str]]:
    """("" = auto-detect), every field of ours (``field:app.Model.field``), every layout."""
    choices = [("", "Detect automatically")]
    choices += [
        (f"field:{field_label(f)}", field_label(f)) for f in inventory.fields(inventory.DECODABLE)
    ]
    choices += [(f"layout:{name}", f"Snowflake layout “{name}”") for name in layout_names()]
    return choices


def parse_token(raw: str) -> int:
    """A pasted token as an int of 0..2**63 - 1 (the reading checks its own range)."""
    value = parse_digits(raw, what="an id or an order number")
    if value >= 2**63:
        raise InvalidId(f"{value} is out of range: ids are below 2**63 (9223372036854775808).")
    return value


def time_texts(moment: datetime, *, milliseconds: bool) -> tuple[str, str, str]:
    """(UTC, site time, the site's zone name) of ``moment``, as text.

    Rendered here, not by the template's ``date`` filter, which converts an aware
    datetime to the current zone: a row labelled UTC must show UTC. Ids show
    milliseconds, order numbers whole seconds (their stems have no fraction).
    """
    spec = "%Y-%m-%d %H:%M:%S.%f" if milliseconds else "%Y-%m-%d %H:%M:%S"
    cut = -3 if milliseconds else None
    utc = moment.astimezone(timezone.utc).strftime(spec)[:cut]
    zone = dj_timezone.get_current_timezone()
    try:
        local = moment.astimezone(zone).strftime(spec)[:cut]
    except OverflowError:  # near year 1 or 9999 the zone's offset leaves datetime's range
        local = "out of the range of dates"
    return utc, local, str(zone)


def _bits(value: int, widths: list[tuple[str, int, int | str]]) -> list[Segment]:
    segments, shift = [], 64
    for index, (name, width, part_value) in enumerate(widths):
        shift -= width
        cells = format((value >> shift) & ((1 << width) - 1), f"0{width}b") if width else ""
        segments.append(Segment(name, part_value, cells, index, shift + width - 1, shift))
    return segments


def _tick_unit(layout: Layout) -> str:
    """What one tick of ``layout`` is: "ms", or "10 ms" (a Sonyflake's)."""
    return "ms" if layout.time_unit_ms == 1 else f"{layout.time_unit_ms} ms"


def _tick_label(layout: Layout) -> str:
    """The name of an id's time part with its unit and origin: a bare tick count is
    meaningless without them ("time (ms since 2020-01-01)")."""
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
    widths: list[tuple[str, int, int | str]] = [("sign", 1, 0)]
    unused = 63 - layout.total_bits
    if unused:
        widths.append(("unused", unused, 0))
    widths.append((f"time ({_tick_unit(layout)})", layout.time_bits, decoded.tick))
    widths += [(p.name, p.bits, decoded.parts[p.name]) for p in layout.node_parts]
    widths.append(("sequence", layout.sequence_bits, decoded.sequence))
    widths.append(("shard", layout.shard_bits, decoded.shard))
    return _bits(decoded.value, [w for w in widths if w[1]])


def order_bits(decoded: DecodedOrderNumber) -> list[Segment]:
    fmt = decoded.format
    if fmt.packing != "binary":
        return _bits(decoded.value, [("sign", 1, 0), ("value", 63, decoded.value)])
    used = 40 + fmt.sequence_bits + fmt.shard_bits
    widths: list[tuple[str, int, int | str]] = [("sign", 1, 0), ("unused", 63 - used, 0)]
    shown = decoded.visible_sequence
    widths += [
        ("stem", 40, f"{decoded.stem:012d}"),
        ("sequence", fmt.sequence_bits, decoded.sequence if shown is None else shown),
        ("shard", fmt.shard_bits, decoded.shard),
    ]
    return _bits(decoded.value, [w for w in widths if w[1]])


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
        Segment("sequence", int(sequence), sequence, 3),
        Segment("shard", int(shard), shard, 4),
    ]
    if check:
        segments.append(Segment("check digit", int(text[-1]), text[-1], 5))
    return segments


def _fill_snowflake(row: DecodedRow, decoded: DecodedId) -> None:
    row.kind = "snowflake"
    row.parts = [
        (_tick_label(decoded.layout), decoded.tick),
        *decoded.parts.items(),
        ("sequence", decoded.sequence),
        *((("shard", decoded.shard),) if decoded.layout.shard_bits else ()),
    ]
    row.time_utc = decoded.time
    row.decoded = decoded
    row.bits = snowflake_bits(decoded)


def _fill_order(row: DecodedRow, decoded: DecodedOrderNumber) -> None:
    row.kind = "order"
    row.parts = [
        ("stem", f"{decoded.stem:012d}"),
        ("sequence", decoded.sequence),
        *(
            ()
            if decoded.visible_sequence is None
            else (("sequence shown (concealed)", decoded.visible_sequence),)
        ),
        ("shard", decoded.shard),
    ]
    row.time_utc = decoded.time
    row.decoded = decoded
    row.bits = order_bits(decoded)
    row.digits = order_digits(decoded)


def _plausible(moment: datetime, now: datetime, earliest: datetime) -> bool:
    return earliest <= moment <= now + PLAUSIBLE_FUTURE


@dataclass(frozen=True)
class _Reading:
    """One way to read a value: a layout or an order-number format, with the fields of
    ours that store values of it and the earliest time a value of it can plausibly have."""

    label: str
    kind: str  # "snowflake" or "order"
    decode: Callable[[int], Any]
    fields: tuple[Any, ...]
    earliest: datetime

    def fill(self, row: DecodedRow, decoded: Any) -> None:
        if self.kind == "order":
            _fill_order(row, decoded)
        else:
            _fill_snowflake(row, decoded)


_Y2000 = datetime(2000, 1, 1, tzinfo=timezone.utc)


def _order_readings(fields: list[Any]) -> list[_Reading]:
    """A reading per order-number format, with the fields that use it."""
    formats: dict[OrderNumberFormat, list[Any]] = {}
    for each in fields:
        if inventory.kind_of(each) == "order":
            try:
                formats.setdefault(each.format, []).append(each)
            except LayoutError:
                continue  # E202 says why
    return [
        _Reading(", ".join(map(field_label, of)), "order", fmt.decode, tuple(of), _Y2000)
        for fmt, of in formats.items()
    ]


def _snowflake_fields(fields: list[Any], layout_name: str) -> list[Any]:
    return [
        f
        for f in fields
        if inventory.kind_of(f) != "order" and (f.layout_name or "default") == layout_name
    ]


def _layout_reading(layout: Layout, names: list[str], fields: list[Any]) -> _Reading:
    label = ", ".join(f"“{name}”" for name in names)
    label = f"Snowflake layout{'s' if len(names) > 1 else ''} {label}"
    return _Reading(label, "snowflake", layout.decode, tuple(fields), layout.epoch)


def _layout_readings(fields: list[Any]) -> list[_Reading]:
    """A reading per configured layout, the default first; layouts that split bits alike
    are one reading (named after all of them)."""
    names: dict[Layout, list[str]] = {}
    for name in layout_names():
        try:
            names.setdefault(get_layout(name), []).append(name)
        except LayoutError:
            continue  # E003 says why
    return [
        _layout_reading(layout, of, [f for n in of for f in _snowflake_fields(fields, n)])
        for layout, of in names.items()
    ]


class _Reader:
    """A reading resolved once for all the tokens of a request: the chosen field or
    layout, or for detection every layout and every order-number format of the project."""

    def __init__(self, reading: str) -> None:
        self.error = ""
        self.chosen = bool(reading)
        self.readings: list[_Reading] = []
        ours = inventory.fields(inventory.DECODABLE)
        try:
            if reading.startswith("field:"):
                field: Any = get_field(reading[6:])  # a field of ours: it has decode()
                kind = "order" if inventory.kind_of(field) == "order" else "snowflake"
                self.readings = [_Reading(field_label(field), kind, field.decode, (field,), _Y2000)]
            elif reading.startswith("layout:"):
                name = reading[7:]
                layout = get_layout(name)
                self.readings = [
                    _layout_reading(layout, [layout.name], _snowflake_fields(ours, name))
                ]
            elif reading:
                raise SnowidError(f"Unknown reading {shown(reading)}.")
            else:
                self.readings = [*_layout_readings(ours), *_order_readings(ours)]
        except SnowidError as exc:  # reported on every row, after the row's own value
            self.error = str(exc)

    @property
    def fields(self) -> list[Any]:
        """Every field that may hold a value of one of the readings."""
        return list(dict.fromkeys(f for reading in self.readings for f in reading.fields))

    def fill(self, row: DecodedRow, now: datetime, holders: list[Holder]) -> None:
        if self.error:
            raise SnowidError(self.error)
        if not self.chosen:
            _detect(row, now, self.readings, holders)
            return
        (reading,) = self.readings
        reading.fill(row, reading.decode(row.value))
        row.reading = reading.label
        row.why = "chosen"
        row.holders = [h for h in holders if h.field in reading.fields]


def decode_tokens(
    tokens: list[str],
    reading: str = "",
    *,
    now: datetime | None = None,
    visible: Callable[[type[models.Model]], bool] | None = None,
) -> list[DecodedRow]:
    """Decode pasted tokens. ``reading``: "" (detect), ``field:<label>`` or
    ``layout:<name>``.

    Each row's ``holders`` are the rows of our fields (of its reading) that hold its value:
    one query per field, whatever the number of tokens. ``visible`` limits them to the
    models it accepts (the admin: those the user may view); detection ranks by them too.
    """
    now = now or datetime.now(timezone.utc)
    reader = _Reader(reading)
    rows = []
    for raw in tokens:
        row = DecodedRow(raw=raw)
        rows.append(row)
        try:
            row.value = parse_token(raw)
        except SnowidError as exc:  # InvalidId: a per-row error
            row.error = str(exc)
    fields = [f for f in reader.fields if visible is None or visible(f.model)]
    held = inventory.rows_holding(fields, {row.value for row in rows if not row.error})
    for row in rows:
        if row.error:
            continue
        try:
            reader.fill(row, now, [Holder(f, pk) for f, pk in held.get(row.value, [])])
        except SnowidError as exc:  # InvalidId, LayoutError and the like: a per-row error
            row.error = str(exc)
            continue
        if row.kind == "snowflake" and _legacy(row, reader):
            continue
        if row.time_utc is not None:
            row.created_utc, row.created_local, row.zone = time_texts(
                row.time_utc, milliseconds=row.kind == "snowflake"
            )
            row.age = now - row.time_utc
    return rows


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _detect(
    row: DecodedRow, now: datetime, readings: list[_Reading], holders: list[Holder]
) -> None:
    """Read ``row`` the way that fits best: a reading whose field holds the value (in a row
    that exists) first, then one whose time is plausible, then the time closest to now."""
    candidates = []
    notes: list[str] = []
    for index, reading in enumerate(readings):
        try:
            decoded = reading.decode(row.value)
        except CheckDigitMismatch as exc:
            notes.append(f"as {_what(reading)} of {reading.label}: {exc}")
            continue
        except InvalidId:
            continue  # out of its range, or no date-time stem: nothing worth saying
        held = [h for h in holders if h.field in reading.fields]
        plausible = _plausible(decoded.time, now, reading.earliest)
        if held or plausible:
            rank = (not held, not plausible, abs(now - decoded.time), index)
            candidates.append((rank, reading, decoded, held))
        else:
            notes.append(f"as {_what(reading)} its time would be {decoded.time:%Y-%m-%d}")
    if not candidates:
        raise InvalidId(
            f"{row.value} is neither a Snowflake id of a configured layout nor an order "
            f"number with a plausible date, and no row of ours holds it "
            f"({'; '.join(notes) or 'no reading decodes it'})."
        )
    candidates.sort(key=lambda c: c[0])
    _, reading, decoded, held = candidates[0]
    reading.fill(row, decoded)
    row.holders = held
    labels = sorted({h.label for h in held})
    # An order-number format is shared by fields: name the one(s) whose row holds it.
    row.reading = ", ".join(labels) if held and reading.kind == "order" else reading.label
    if held:
        row.why = f"detected: a row of {', '.join(labels)} holds it ({_when(decoded.time)})"
    else:
        row.why = f"detected: its time as {_what(reading)}, {_when(decoded.time)}, is plausible"
    row.alternatives = [
        f"{other.label}: {_when(value.time)}" + (" (a row holds it)" if other_held else "")
        for _, other, value, other_held in candidates[1:]
    ]


def _what(reading: _Reading) -> str:
    return "an order number" if reading.kind == "order" else "a Snowflake id"


def _legacy(row: DecodedRow, reader: _Reader) -> bool:
    """Mark ``row`` a legacy id when it lies below the first Snowflake id of an adopted
    model it belongs to (a row of it holds the value, or its reading is that model's)."""
    fields = [h.field for h in row.holders] or [
        f for r in reader.readings if r.label == row.reading for f in r.fields
    ]
    for held in fields:
        if not held.primary_key:
            continue
        boundary = legacy_boundary(held.model)
        if boundary is not None and row.value < boundary:
            row.kind, row.time_utc, row.parts, row.bits = "legacy", None, [], []
            row.error = (
                f"{row.value} is a legacy id, from before Snowflake ids were adopted "
                f"({held.model._meta.label}: ids below {boundary})."
            )
            return True
    return False
