"""Reading pasted ids for people: which reading, why, every part, and a bit diagram.

Used by the admin's decode page and its model-admin panels; no HTTP here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from django.utils import timezone as dj_timezone

from . import inventory
from .core.digits import parse_digits
from .core.layout import DecodedId, Layout
from .core.order_format import DecodedOrderNumber, OrderNumberFormat
from .exceptions import InvalidId, LayoutError, SnowidError
from .ids.issuer import get_layout, layout_names
from .inventory import field_label, get_field

__all__ = [
    "DecodedRow",
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
    def node_text(self) -> str:
        """The node parts of an id ("datacenter=1 worker=3"); order numbers have none."""
        if isinstance(self.decoded, DecodedId):
            return " ".join(f"{k}={v}" for k, v in self.decoded.parts.items())
        return ""

    @property
    def counter_text(self) -> str:
        if isinstance(self.decoded, DecodedOrderNumber):
            return f"sequence {self.decoded.sequence} / shard {self.decoded.shard}"
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
        }

    age: timedelta | None = None
    bits: list[Segment] = field(default_factory=list)
    digits: list[Segment] = field(default_factory=list)
    fields: list[Any] = field(default_factory=list)  # fields this reading may be stored in
    link: str = ""


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


def snowflake_bits(decoded: DecodedId) -> list[Segment]:
    layout = decoded.layout
    widths: list[tuple[str, int, int | str]] = [("sign", 1, 0)]
    unused = 63 - layout.total_bits
    if unused:
        widths.append(("unused", unused, 0))
    widths.append(("time", layout.time_bits, decoded.tick))
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
    widths += [
        ("stem", 40, f"{decoded.stem:012d}"),
        ("sequence", fmt.sequence_bits, decoded.sequence),
        ("shard", fmt.shard_bits, decoded.shard),
    ]
    return _bits(decoded.value, [w for w in widths if w[1]])


def order_digits(decoded: DecodedOrderNumber) -> list[Segment]:
    fmt = decoded.format
    if fmt.packing != "decimal":
        return []
    text = str(decoded.value).zfill(12 + fmt.sequence_digits + fmt.shard_digits)
    stem, rest = text[:12], text[12:]
    sequence, shard = rest[: fmt.sequence_digits], rest[fmt.sequence_digits :]
    return [
        Segment("stem", stem, stem, 2),
        Segment("sequence", int(sequence), sequence, 3),
        Segment("shard", int(shard), shard, 4),
    ]


def _fill_snowflake(row: DecodedRow, decoded: DecodedId, fields: list[Any]) -> None:
    row.kind = "snowflake"
    row.parts = [
        ("time (ticks)", decoded.tick),
        *decoded.parts.items(),
        ("sequence", decoded.sequence),
        *((("shard", decoded.shard),) if decoded.layout.shard_bits else ()),
    ]
    row.time_utc = decoded.time
    row.decoded = decoded
    row.bits = snowflake_bits(decoded)
    row.fields = fields


def _fill_order(row: DecodedRow, decoded: DecodedOrderNumber, fields: list[Any]) -> None:
    row.kind = "order"
    row.parts = [
        ("stem", f"{decoded.stem:012d}"),
        ("sequence", decoded.sequence),
        ("shard", decoded.shard),
    ]
    row.time_utc = decoded.time
    row.decoded = decoded
    row.bits = order_bits(decoded)
    row.digits = order_digits(decoded)
    row.fields = fields


def _plausible(moment: datetime, now: datetime, earliest: datetime) -> bool:
    return earliest <= moment <= now + PLAUSIBLE_FUTURE


def _order_formats(fields: list[Any]) -> dict[OrderNumberFormat, list[Any]]:
    formats: dict[OrderNumberFormat, list[Any]] = {}
    for each in fields:
        if inventory.kind_of(each) == "order":
            try:
                formats.setdefault(each.format, []).append(each)
            except LayoutError:
                continue
    return formats


def _snowflake_fields(fields: list[Any], layout_name: str) -> list[Any]:
    return [
        f
        for f in fields
        if inventory.kind_of(f) != "order" and (f.layout_name or "default") == layout_name
    ]


class _Reader:
    """A reading resolved once for all the tokens of a request: the chosen field or
    layout, or for auto-detection the default layout and every order-number format."""

    def __init__(self, reading: str) -> None:
        self.error = ""
        self.chosen: tuple[str, Callable[[int], Any], Callable[..., None], list[Any]] | None = None
        ours = inventory.fields(inventory.DECODABLE)
        try:
            if reading.startswith("field:"):
                field: Any = get_field(reading[6:])  # a field of ours: it has decode()
                fill = _fill_order if inventory.kind_of(field) == "order" else _fill_snowflake
                self.chosen = (field_label(field), field.decode, fill, [field])
            elif reading.startswith("layout:"):
                layout = get_layout(reading[7:])
                self.chosen = (
                    f"Snowflake layout “{layout.name}”",
                    layout.decode,
                    _fill_snowflake,
                    _snowflake_fields(ours, reading[7:]),
                )
            elif reading:
                raise SnowidError(f"Unknown reading {reading!r}.")
            else:
                self.layout = get_layout()
                self.order_formats = _order_formats(ours)
                self.default_fields = _snowflake_fields(ours, "default")
        except SnowidError as exc:  # reported on every row, after the row's own value
            self.error = str(exc)

    def fill(self, row: DecodedRow, now: datetime) -> None:
        if self.error:
            raise SnowidError(self.error)
        if self.chosen is None:
            _detect(row, now, self)
            return
        label, decode, fill, fields = self.chosen
        row.reading = label
        row.why = "chosen"
        fill(row, decode(row.value), fields)


def decode_tokens(
    tokens: list[str], reading: str = "", *, now: datetime | None = None
) -> list[DecodedRow]:
    """Decode pasted tokens. ``reading``: "" (auto), ``field:<label>`` or ``layout:<name>``."""
    now = now or datetime.now(timezone.utc)
    reader = _Reader(reading)
    rows = []
    for raw in tokens:
        row = DecodedRow(raw=raw)
        rows.append(row)
        try:
            row.value = parse_token(raw)
            reader.fill(row, now)
        except SnowidError as exc:  # InvalidId, LayoutError and the like: a per-row error
            row.error = str(exc)
            continue
        if row.time_utc is not None:
            row.created_utc, row.created_local, row.zone = time_texts(
                row.time_utc, milliseconds=row.kind == "snowflake"
            )
            row.age = now - row.time_utc
    return rows


def _detect(row: DecodedRow, now: datetime, reader: _Reader) -> None:
    layout: Layout = reader.layout
    notes: list[str] = []
    candidates: list[tuple[timedelta, str, Any, Any, list[Any]]] = []
    for fmt, fields in reader.order_formats.items():
        label = ", ".join(field_label(f) for f in fields)
        try:
            decoded = fmt.decode(row.value)
        except InvalidId:
            continue  # not a date-time stem of this format: nothing worth saying
        if _plausible(decoded.time, now, datetime(2000, 1, 1, tzinfo=timezone.utc)):
            candidates.append((abs(now - decoded.time), "order", label, decoded, fields))
        else:
            notes.append(f"as an order number of {label} its date would be {decoded.time:%Y-%m-%d}")
    try:
        snow = layout.decode(row.value)
        if _plausible(snow.time, now, layout.epoch):
            candidates.append(
                (
                    abs(now - snow.time),
                    "snowflake",
                    "layout “default”",
                    snow,
                    reader.default_fields,
                )
            )
        else:
            notes.append(
                f"as a Snowflake id of the default layout its time would be {snow.time:%Y-%m-%d}"
            )
    except InvalidId as exc:
        notes.append(str(exc))
    if not candidates:
        raise InvalidId(
            f"{row.value} is neither a Snowflake id of the default layout nor an "
            f"order number with a plausible date ({'; '.join(notes)})."
        )
    candidates.sort(key=lambda c: c[0])
    _, kind, label, decoded, fields = candidates[0]
    when = decoded.time.strftime("%Y-%m-%d %H:%M:%S UTC")
    others = [f"{c[1]} ({c[2]}) would date from {c[3].time:%Y-%m-%d}" for c in candidates[1:]]
    what = "an order number" if kind == "order" else "a Snowflake id"
    row.why = f"detected: its time as {what}, {when}, is plausible"
    if others or notes:
        row.why += "; " + "; ".join(others + notes)
    row.reading = label if kind == "order" else f"Snowflake {label}"
    if kind == "order":
        _fill_order(row, decoded, fields)
    else:
        _fill_snowflake(row, decoded, fields)
