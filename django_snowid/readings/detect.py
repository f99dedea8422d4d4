"""Decoding pasted tokens: the reading of each, and the rows of ours that hold it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from django.db import models

from .. import inventory
from ..core.echo import shown
from ..exceptions import CheckDigitMismatch, InvalidId, SnowidError
from ..inventory import field_label, get_field
from ..settings_layouts import get_layout, layout_names
from .kinds import Reading, field_reading, layout_reading, readings_of
from .rows import DecodedRow, Holder, parse_token, time_texts

__all__ = ["decode_tokens", "reading_choices"]

PLAUSIBLE_FUTURE = timedelta(days=1)


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
    """Decode pasted tokens by ``reading`` ("" detects, ``field:<label>``, ``layout:<name>``),
    with the rows holding each value among the models ``visible`` accepts."""
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
    return rows


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _detect(
    row: DecodedRow, now: datetime, readings: list[Reading], holders: list[Holder]
) -> Reading:
    """Read ``row`` the way that fits best: held value, then plausible time, then nearest time."""

    candidates = []
    notes: list[str] = []
    for index, reading in enumerate(readings):
        try:
            decoded = reading.decode(row.value)
        except CheckDigitMismatch as exc:
            notes.append(f"as {reading.what} of {reading.label}: {exc}")
            continue
        except InvalidId:
            continue  # out of its range, or no date-time stem: nothing worth saying
        held = [h for h in holders if h.field in reading.fields]
        plausible = reading.earliest <= decoded.time <= now + PLAUSIBLE_FUTURE
        if held or plausible:
            rank = (not held, not plausible, abs(now - decoded.time), index)
            candidates.append((rank, reading, decoded, held))
        else:
            notes.append(f"as {reading.what} its time would be {decoded.time:%Y-%m-%d}")
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
    row.reading = reading.name(labels)
    if held:
        row.why = f"detected: a row of {', '.join(labels)} holds it ({_when(decoded.time)})"
    else:
        row.why = f"detected: its time as {reading.what}, {_when(decoded.time)}, is plausible"
    row.alternatives = [
        f"{other.label}: {_when(value.time)}" + (" (a row holds it)" if other_held else "")
        for _, other, value, other_held in candidates[1:]
    ]
    return reading
