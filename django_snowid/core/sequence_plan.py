"""Named sequences, the pure part: names, days, rates, step sizing and text templates (the
clock is always passed in)."""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from typing import Final

from .echo import shown

__all__ = [
    "LOW_WATER_S",
    "TARGET_S",
    "WINDOW_S",
    "Rates",
    "Template",
    "check_name",
    "day_stamp",
    "needs_raise",
    "plan_step",
    "storage_name",
]

#: Raise the mark when the headroom left would last less than this at the estimated rate.
LOW_WATER_S: Final = 900
#: ... and raise it by this many seconds' worth.
TARGET_S: Final = 1800
#: The averaging window of the rate (five minutes).
WINDOW_S: Final = 300

# Letters, digits, "_", "-", ".": a name goes into a Redis hash tag ("{...}") and a
# database key; ":" separates a daily sequence's name from its day.
_NAME: Final = re.compile(r"[A-Za-z0-9_.\-]{1,100}")


def check_name(name: object) -> str:
    """``name`` if it may name a sequence; ``ValueError`` that says why not otherwise."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"{shown(name)} is not a sequence name: use 1 to 100 letters, digits, '_', '-' or '.'."
        )
    return name


def day_stamp(unix_s: float, zone: tzinfo) -> str:
    """The day (``YYYYMMDD``) of an instant in a zone: a daily sequence's identity."""
    return datetime.fromtimestamp(unix_s, timezone.utc).astimezone(zone).strftime("%Y%m%d")


def storage_name(name: str, day: str | None) -> str:
    """The key a sequence's state is stored under: ``name``, or ``name:day`` for a daily one."""
    return name if day is None else f"{name}:{day}"


@dataclass(frozen=True)
class Rates:
    """Consumption figures of one sequence, as the store keeps them.

    ``second`` is the Unix second ``this_second`` values were drawn in, ``last_second``
    the count of the second before it; ``window`` the start of the current five-minute
    window, ``in_window`` its count and ``in_previous`` the previous window's.
    """

    second: int = 0
    this_second: int = 0
    last_second: int = 0
    window: int = 0
    in_window: int = 0
    in_previous: int = 0

    def last_second_rate(self, now_s: int) -> float:
        """Values drawn in the last full second (0 once it is older than that)."""
        if now_s == self.second:
            return float(self.last_second)
        if now_s == self.second + 1:
            return float(self.this_second)
        return 0.0

    def average_rate(self, now_s: int) -> float:
        """Values a second over the last five minutes (a sliding window of two buckets)."""
        window = now_s - now_s % WINDOW_S
        if window == self.window:
            current, previous = self.in_window, self.in_previous
        elif window == self.window + WINDOW_S:
            current, previous = 0, self.in_window
        else:
            return 0.0
        # The previous window counts for the part of it still inside the last 300 s.
        left = 1 - (now_s - window) / WINDOW_S
        return (current + previous * left) / WINDOW_S

    def estimate(self, now_s: int) -> float:
        """The rate to plan for: the larger of the last second and the five-minute average."""
        return max(self.last_second_rate(now_s), self.average_rate(now_s))


def plan_step(rate: float, *, min_step: int, max_step: int, need: int = 1) -> int:
    """How far to raise a mark: ``TARGET_S`` seconds' worth at ``rate``, within the bounds,
    never less than ``need``."""
    step = min(max(math.ceil(rate * TARGET_S), min_step), max_step)
    return max(step, need)


def needs_raise(headroom: int, rate: float) -> bool:
    """Whether the headroom left would last less than ``LOW_WATER_S`` at ``rate``."""
    return headroom <= 0 or headroom < rate * LOW_WATER_S


class Template:
    """A text value made of a sequence's value: ``"INV-{day}-{value:06d}"``.

    Two fields: ``{value}`` (required, with an optional ``0Nd``/``Nd`` width) and ``{day}``
    (the day of a daily sequence, ``YYYYMMDD``, or of the moment of issue).
    """

    FIELDS: Final = frozenset({"value", "day"})

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise ValueError(f"The template {text!r} is not a string.")
        fields: list[str] = []
        width = 0
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise ValueError(f"The template {text!r} is not valid: {exc}.") from None
        for _literal, field, spec, conversion in parsed:
            if field is None:
                continue
            if field not in self.FIELDS or conversion:
                raise ValueError(
                    f"The template {text!r} has the field {{{field}}}: only {{value}} and "
                    "{day} are known."
                )
            if field == "value":
                match = re.fullmatch(r"0?(\d*)d?", spec or "")
                if match is None:
                    raise ValueError(
                        f"The template {text!r} formats {{value}} as {spec!r}: use a width "
                        "such as {value:06d}."
                    )
                width = max(width, int(match.group(1) or 0))
            elif spec:
                raise ValueError(f"The template {text!r} formats {{day}}: it takes no format.")
            fields.append(field)
        if "value" not in fields:
            raise ValueError(
                f"The template {text!r} has no {{value}}: every text would be the same."
            )
        self.text = text
        self.width = width
        self.uses_day = "day" in fields

    def render(self, value: int, day: str) -> str:
        return self.text.format(value=value, day=day)

    def padded_length(self) -> int:
        """The length of a text whose value fills its width (or has one digit, without one)."""
        return len(self.render(10 ** max(self.width, 1) - 1, "00000000"))
