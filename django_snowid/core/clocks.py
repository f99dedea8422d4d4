"""The host's clocks as they are, and the clock tests move (freezegun replaces the
``time`` functions in module globals; time-machine patches the C functions in place)."""

from __future__ import annotations

import sys
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Final

__all__ = [
    "clock_mover",
    "moved_clock_hint",
    "moved_time_ns",
    "real_monotonic",
    "real_time",
    "real_time_ns",
]


def _unpatched(name: str) -> Any:
    """``time.<name>`` as it was before freezegun."""
    freezegun = sys.modules.get("freezegun.api")
    if freezegun is not None:
        return getattr(freezegun, f"real_{name}")
    return getattr(time, name)


class _Real:
    time_ns: Final = staticmethod(_unpatched("time_ns"))
    monotonic: Final = staticmethod(_unpatched("monotonic"))


def real_time_ns() -> int:
    """Unix nanoseconds on the host's clock, whatever a test moved."""
    machine = sys.modules.get("time_machine")
    if machine is not None and machine.escape_hatch.is_travelling():
        return int(machine.escape_hatch.time.time_ns())
    return int(_Real.time_ns())


def real_time() -> float:
    """Unix seconds on the host's clock, whatever a test moved."""
    return real_time_ns() / 1e9


def real_monotonic() -> float:
    """The host's monotonic clock in seconds, whatever a test moved."""
    return float(_Real.monotonic())


_UNIX: Final = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND: Final = timedelta(microseconds=1)


def moved_time_ns() -> int:
    """Unix nanoseconds as the code under test sees them (under freezegun, read from
    ``datetime.now()``: its ``time_ns()`` goes through a float)."""
    freezegun = sys.modules.get("freezegun.api")
    if freezegun is not None and freezegun.freeze_factories:
        return (datetime.now(timezone.utc) - _UNIX) // _MICROSECOND * 1000
    return time.time_ns()


def clock_mover() -> str | None:
    """The tool that moves the clock now: ``"freezegun"``, ``"time-machine"`` or None."""
    freezegun = sys.modules.get("freezegun.api")
    if freezegun is not None and freezegun.freeze_factories:
        return "freezegun"
    machine = sys.modules.get("time_machine")
    if machine is not None and machine.escape_hatch.is_travelling():
        return "time-machine"
    return None


def moved_clock_hint() -> str:
    """What a refusal adds when a test tool moves the clock (else nothing)."""
    mover = clock_mover()
    if mover is None:
        return ""
    return (
        f" The clock is moved by {mover}. Ids follow a moved clock only in a process where "
        "Django's test environment was set up (Django's test runner, pytest-django) before "
        "its first id; elsewhere the clock and lease guarantees hold and a moved clock is "
        "refused. See the manual, docs/testing.rst."
    )
