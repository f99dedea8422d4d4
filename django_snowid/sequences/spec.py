"""The spec of a named sequence, built from ``SNOWID_SEQUENCES`` and the defaults of
``SNOWID_SEQUENCE_*`` (read on every access: ``override_settings`` works)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timezone, tzinfo
from typing import Any, Final, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..conf import SequenceBackend, UnknownSequences, conf
from ..core.sequence_plan import check_name
from ..exceptions import InvalidSequence, UnknownSequence

KINDS: Final = ("normal", "daily")
BACKENDS: Final = get_args(SequenceBackend)
UNKNOWN: Final = get_args(UnknownSequences)
_KEYS: Final = frozenset({"kind", "zone", "start", "min_step", "max_step"})


@dataclass(frozen=True)
class SequenceSpec:
    name: str
    kind: str = "normal"
    zone: tzinfo = timezone.utc
    start: int = 1
    min_step: int = 100
    max_step: int = 1_000_000
    #: What each value adds to the one before (``increment``).
    step: int = 1
    #: Values cycle from ``start`` to ``reset - 1`` (``reset_value``); ``None``: no cycle.
    reset: int | None = None
    #: ``start`` lifts an existing sequence that is below it (ours: a floor); False: it is
    #: only the first value of a new sequence (django-sequences' ``initial_value``).
    lift: bool = True

    @property
    def plain(self) -> bool:
        """Values go up by one, with no cycle: the stores' fast path."""
        return self.step == 1 and self.reset is None and self.lift

    @property
    def daily(self) -> bool:
        return self.kind == "daily"


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidSequence(f"{what} is {value!r}: expected an integer >= 1.")
    return value


def build_spec(name: str, declaration: Any) -> SequenceSpec:
    """The spec of one ``SNOWID_SEQUENCES`` entry; ``InvalidSequence`` says what is wrong."""
    where = f"SNOWID_SEQUENCES[{name!r}]"
    try:
        check_name(name)
    except ValueError as exc:
        raise InvalidSequence(f"{where}: {exc}") from None
    if not isinstance(declaration, Mapping):
        raise InvalidSequence(f"{where} is {declaration!r}: expected a dict.")
    unknown = set(declaration) - _KEYS
    if unknown:
        raise InvalidSequence(
            f"{where} has unknown keys {sorted(unknown)}: expected {sorted(_KEYS)}."
        )
    kind = declaration.get("kind", "normal")
    if kind not in KINDS:
        raise InvalidSequence(f"{where}['kind'] is {kind!r}: expected 'normal' or 'daily'.")
    zone_name = declaration.get("zone", "UTC")
    try:
        zone = ZoneInfo(zone_name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise InvalidSequence(f"{where}['zone'] is {zone_name!r}: not an IANA zone.") from None
    start = declaration.get("start", 1)
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise InvalidSequence(f"{where}['start'] is {start!r}: expected an integer >= 0.")
    min_step = _positive_int(
        declaration.get("min_step", conf.SEQUENCE_MIN_STEP), f"{where}['min_step']"
    )
    max_step = _positive_int(
        declaration.get("max_step", conf.SEQUENCE_MAX_STEP), f"{where}['max_step']"
    )
    if max_step < min_step:
        raise InvalidSequence(f"{where}: max_step {max_step} is below min_step {min_step}.")
    return SequenceSpec(name, kind, zone, start, min_step, max_step)


_specs: dict[tuple[Any, ...], tuple[Any, SequenceSpec]] = {}


def get_spec(name: str) -> SequenceSpec:
    """The spec of sequence ``name``: declared, or the defaults for an unknown name."""
    declared = conf.SEQUENCES
    # Built once per name and settings (a new settings object is a new key).
    key = (
        name,
        id(declared),
        conf.SEQUENCES_UNKNOWN,
        conf.SEQUENCE_MIN_STEP,
        conf.SEQUENCE_MAX_STEP,
    )
    entry = _specs.get(key)
    if entry is None or entry[0] is not declared:  # ids of dead objects are reused
        entry = (declared, _build(name, declared))
        if len(_specs) > 4096:
            _specs.clear()
        _specs[key] = entry
    return entry[1]


def _build(name: str, declared: Any) -> SequenceSpec:
    if not isinstance(declared, Mapping):
        raise InvalidSequence(f"SNOWID_SEQUENCES is {declared!r}: expected a dict.")
    if name in declared:
        return build_spec(name, declared[name])
    try:
        check_name(name)
    except ValueError as exc:
        raise InvalidSequence(str(exc)) from None
    if conf.SEQUENCES_UNKNOWN == "refuse":
        raise UnknownSequence(
            f"The sequence {name!r} is not declared in SNOWID_SEQUENCES, and "
            "SNOWID_SEQUENCES_UNKNOWN is 'refuse'. Nothing was issued."
        )
    return build_spec(name, {})
