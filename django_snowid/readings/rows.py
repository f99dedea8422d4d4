"""A pasted token and what its reading makes of it, for people."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from django.utils import timezone as dj_timezone

from ..core.digits import parse_digits
from ..exceptions import InvalidId

__all__ = ["DecodedRow", "Holder", "Segment", "parse_token", "time_texts"]


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
    label: str  # the field's, "app_label.Model.field"


@dataclass
class DecodedRow:
    raw: str
    error: str = ""
    kind: str = ""  # "snowflake", "order" or "legacy"
    reading: str = ""  # what it was read as
    why: str = ""
    value: int = 0
    parts: list[tuple[str, Any]] = field(default_factory=list)
    time_utc: datetime | None = None
    created_utc: str = ""
    created_local: str = ""  # the same instant on the site's clock (TIME_ZONE)
    zone: str = ""
    decoded: Any = None  # the DecodedId or DecodedOrderNumber
    node_text: str = ""  # "datacenter=1 worker=3"
    counter_text: str = ""  # "sequence 5" or "sequence 5 / shard 2"
    shard_text: str = ""
    age: timedelta | None = None
    bits: list[Segment] = field(default_factory=list)
    digits: list[Segment] = field(default_factory=list)
    holders: list[Holder] = field(default_factory=list)  # rows that hold it, in this reading
    links: list[tuple[str, str]] = field(default_factory=list)  # (what, URL) of those rows
    link: str = ""
    alternatives: list[str] = field(default_factory=list)  # other readings, when detected
    note: str = ""  # what a legacy id is, in place of its parts
    rows_created: list[tuple[str, str]] = field(default_factory=list)

    @property
    def site_time_differs(self) -> bool:
        return self.created_local != self.created_utc

    def as_record(self) -> dict[str, str]:
        """What the page shows of this row, as strings, for the CSV and JSON exports."""
        return {
            "value": self.raw,
            "error": self.error,
            "reading": self.reading,
            "created_utc": self.created_utc,
            "created_site_time": self.created_local,
            "site_time_zone": self.zone,
            "node": self.node_text,
            "sequence": "" if self.decoded is None else str(self.decoded.sequence),
            "shard": self.shard_text,
            "link": self.link,
            "other_readings": "; ".join(self.alternatives),
            "note": self.note,
        }


def parse_token(raw: str) -> int:
    """A pasted token as an int of 0..2**63 - 1 (the reading checks its own range)."""
    value = parse_digits(raw, what="an id or an order number")
    if value >= 2**63:
        raise InvalidId(f"{value} is out of range: ids are below 2**63 (9223372036854775808).")
    return value


def time_texts(moment: datetime, *, milliseconds: bool) -> tuple[str, str, str]:
    """(UTC, site time, the site's zone name) of ``moment``, as text."""

    spec = "%Y-%m-%d %H:%M:%S.%f" if milliseconds else "%Y-%m-%d %H:%M:%S"
    cut = -3 if milliseconds else None
    utc = moment.astimezone(timezone.utc).strftime(spec)[:cut]
    zone = dj_timezone.get_current_timezone()
    try:
        local = moment.astimezone(zone).strftime(spec)[:cut]
    except OverflowError:  # near year 1 or 9999 the zone's offset leaves datetime's range
        local = "out of the range of dates"
    return utc, local, str(zone)
