"""What both sequence stores share: their clock, and the name a value is stored under."""

from __future__ import annotations

from collections.abc import Callable

from ...core.sequence_plan import day_stamp, storage_name
from ..spec import SequenceSpec

__all__ = ["Clock", "stored_name"]

Clock = Callable[[], float]


def stored_name(spec: SequenceSpec, now: float) -> str:
    """``name``, or ``name:YYYYMMDD`` (the day in the sequence's zone) for a daily one."""
    return storage_name(spec.name, day_stamp(now, spec.zone) if spec.daily else None)
