"""Decoding pasted tokens: the reading of each, and the rows of ours that hold it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from django.db import models

from .. import inventory
from ..core.echo import shown
from ..exceptions import CheckDigitMismatch, InvalidId, SnowidError
from ..inventory import field_label, get_field
from ..orders.formats import build_format
from ..settings_layouts import get_layout, layout_names
from .kinds import OrderReading, Reading, field_reading, layout_reading, readings_of
from .rows import DecodedRow, Holder, parse_token, time_texts

__all__ = ["decode_tokens", "reading_choices"]

PLAUSIBLE_FUTURE = timedelta(days=1)

ORDER_SETTINGS = "the order-number format of the settings (SNOWID_ORDER_*)"


def reading_choices() -> list[tuple[str, str]]:
    """("" = auto-detect), every field of ours (``field:app.Model.field``), every layout."""
    choices = [("", "Detect automatically")]
    choices += [
        (f"field:{field_label(f)}", field_label(f)) for f in inventory.fields(inventory.DECODABLE)
    ]
    choices += [(f"layout:{name}", f"Snowflake layout “{name}”") for name in layout_names()]
    return choices


class _Reader:
    """The reading(s) of a request, resolved once for all its tokens."""

    def __init__(self, reading: str) -> None:
        self.error = ""
        self.chosen = bool(reading)
        self.readings: list[Reading] = []
        ours = inventory.fields(inventory.DECODABLE)
        try:
            if reading.startswith("field:"):
                self.readings = [field_reading(get_field(reading[6:]))]
            elif reading.startswith("layout:"):
                layout = get_layout(reading[7:])
                self.readings = [layout_reading(layout, [layout.name], ours)]
            elif reading == "order:":
                fmt = build_format()
                self.readings = [OrderReading(ORDER_SETTINGS, fmt.decode, (), format=fmt)]
            elif reading:
                raise SnowidError(f"Unknown reading {shown(reading)}.")
            else:
                self.readings = readings_of(ours)
        except SnowidError as exc:  # reported on every row, after the row's own value
            self.error = str(exc)

    @property
    def fields(self) -> list[Any]:
        """Every field that may hold a value of one of the readings."""
        return list(dict.fromkeys(f for reading in self.readings for f in reading.fields))

    def fill(self, row: DecodedRow, now: datetime, holders: list[Holder]) -> Reading:
        if self.error:
            raise SnowidError(self.error)
        if not self.chosen:
            return _detect(row, now, self.readings, holders)
        (reading,) = self.readings
        reading.fill(row, reading.decode(row.value))
        row.reading = reading.label
        row.why = "chosen"
        row.holders = [h for h in holders if h.field in reading.fields]
        return reading


def decode_tokens(
    tokens: list[str],
    reading: str = "",
    *,
    now: datetime | None = None,
    visible: Callable[[type[models.Model]], bool] | None = None,
) -> list[DecodedRow]:
    """Decode pasted tokens by ``reading`` ("" detects, ``field:<label>``, ``layout:<name>``,
    ``order:`` the format of the settings), with the rows holding each value among the
    models ``visible`` accepts."""
    now = now or datetime.now(timezone.utc)
    reader = _Reader(reading)
    rows = [_parsed(raw) for raw in tokens]
    fields = [f for f in reader.fields if visible is None or visible(f.model)]
    held = inventory.rows_holding(fields, {row.value for row in rows if not row.error})
    for row in rows:
        if row.error:
            continue
        try:
            holders = [Holder(f, pk, field_label(f)) for f, pk in held.get(row.value, [])]
            read = reader.fill(row, now, holders)
        except SnowidError as exc:  # InvalidId, LayoutError and the like: a per-row error
            row.error = str(exc)
            continue
        if read.legacy(row) or row.time_utc is None:
            continue
        row.created_utc, row.created_local, row.zone = time_texts(
            row.time_utc, milliseconds=read.milliseconds
        )
        row.age = now - row.time_utc
        if read.kind is inventory.ORDER:
            row.rows_created = _rows_created(row.holders)
    return rows


def _parsed(raw: str) -> DecodedRow:
    row = DecodedRow(raw=raw)
    try:
        row.value = parse_token(raw)
    except SnowidError as exc:  # InvalidId: a per-row error
        row.error = str(exc)
    return row


def _rows_created(holders: list[Holder]) -> list[tuple[str, str]]:
    created = []
    for holder in holders:
        key: Any = holder.field.model._meta.pk
        if inventory.kind_of(key) is not inventory.SNOWFLAKE:
            continue
        try:
            moment = key.decode(holder.pk).time
        except SnowidError:
            continue
        label = holder.field.model._meta.label
        created.append((label, time_texts(moment, milliseconds=True)[0]))
    return created


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass(frozen=True)
class _Candidate:
    """A reading that decodes a value, what it makes of it, and the rows that hold it."""

    reading: Reading
    decoded: Any
    held: list[Holder]
    rank: tuple[Any, ...]


def _candidates(
    value: int, now: datetime, readings: list[Reading], holders: list[Holder]
) -> tuple[list[_Candidate], list[str], list[str]]:
    """The readings that decode ``value`` (held or plausible, best first), notes on the others,
    and those whose check digit it fails one digit away from a number of theirs."""
    candidates, notes, typos = [], [], []
    for index, reading in enumerate(readings):
        try:
            decoded = reading.decode(value)
        except CheckDigitMismatch as exc:
            notes.append(f"as {reading.what} of {reading.label}: {exc}")
            meant = reading.mistyped(value) if isinstance(reading, OrderReading) else None
            if meant is not None and reading.earliest <= meant.time <= now + PLAUSIBLE_FUTURE:
                typos.append(f"{reading.label} ({meant.format.check_digit})")
            continue
        except InvalidId:
            continue  # out of its range, or no date-time stem: nothing worth saying
        held = [h for h in holders if h.field in reading.fields]
        plausible = reading.earliest <= decoded.time <= now + PLAUSIBLE_FUTURE
        if held or plausible:
            rank = (not held, not plausible, abs(now - decoded.time), index)
            candidates.append(_Candidate(reading, decoded, held, rank))
        else:
            notes.append(f"as {reading.what} its time would be {decoded.time:%Y-%m-%d}")
    return sorted(candidates, key=lambda c: c.rank), notes, typos


def _detect(
    row: DecodedRow, now: datetime, readings: list[Reading], holders: list[Holder]
) -> Reading:
    """Read ``row`` the way that fits best: held value, then plausible time, then nearest
    time; a mistyped check digit (no row holding the value) is an error."""
    candidates, notes, typos = _candidates(row.value, now, readings, holders)
    if typos and not any(c.held for c in candidates):
        instead = "; ".join(f"{c.reading.label}, {_when(c.decoded.time)}" for c in candidates)
        raise CheckDigitMismatch(
            f"{row.value} fails the check digit of {' and '.join(typos)}: a digit was "
            "mistyped or two were swapped. Compare it with the number as written"
            + (f"; as typed it would read as {instead} (choose that reading)." if instead else ".")
        )
    if not candidates:
        raise InvalidId(
            f"{row.value} is neither a Snowflake id of a configured layout nor an order "
            f"number with a plausible date, and no row of ours holds it "
            f"({'; '.join(notes) or 'no reading decodes it'})."
        )
    best, *others = candidates
    best.reading.fill(row, best.decoded)
    row.holders = best.held
    labels = sorted({h.label for h in best.held})
    row.reading = best.reading.name(labels)
    when = _when(best.decoded.time)
    if best.held:
        row.why = f"detected: a row of {', '.join(labels)} holds it ({when})"
    else:
        row.why = f"detected: its time as {best.reading.what}, {when}, is plausible"
    row.alternatives = [
        f"{c.reading.label}: {_when(c.decoded.time)}" + (" (a row holds it)" if c.held else "")
        for c in others
    ]
    return best.reading
