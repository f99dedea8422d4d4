"""Bit layouts of Snowflake ids: compose, decode, limits, and every conversion between
ticks, times and ids. An id is, from its most significant bit: sign (0) | time (ticks
since the epoch) | node parts | sequence [| shard] (docs: "Layouts", "Spread low bits").
Pure Python: no Django, no I/O."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any, TypeGuard

from ..exceptions import InvalidId, LayoutError
from .digits import parse_digits

__all__ = [
    "DEFAULT_EPOCH",
    "PRESETS",
    "DecodedId",
    "Layout",
    "NodePart",
    "default_spread_bits",
    "layout_from_spec",
    "parse_epoch",
]

UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
#: 2020-01-01T00:00:00Z: 41 bits of milliseconds from here last until 2089-09-06.
DEFAULT_EPOCH = datetime(2020, 1, 1, tzinfo=timezone.utc)
MAX_BITS = 63
_ONE_MICROSECOND = timedelta(microseconds=1)


def iso_utc(moment: datetime, *, milliseconds: bool) -> str:
    """``moment`` in UTC as ISO 8601 with a "Z": milliseconds for ids, seconds for order
    numbers."""
    text = moment.astimezone(timezone.utc).isoformat(
        timespec="milliseconds" if milliseconds else "seconds"
    )
    return text.replace("+00:00", "Z")


def parse_epoch(value: datetime | str) -> datetime:
    """Return ``value`` as an aware UTC datetime; naive datetimes are refused."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise LayoutError(
                f"{value!r} is not an ISO 8601 date-time (e.g. '2020-01-01T00:00:00Z')."
            ) from None
    if not isinstance(value, datetime):
        raise LayoutError(f"The epoch must be an aware datetime or an ISO string, not {value!r}.")
    if value.tzinfo is None or value.utcoffset() is None:
        raise LayoutError(
            f"The epoch {value.isoformat()} has no time zone; give it as an aware UTC "
            "instant (e.g. '2020-01-01T00:00:00Z')."
        )
    return value.astimezone(timezone.utc)


@dataclass(frozen=True)
class NodePart:
    """One named part of the node field, e.g. ``datacenter`` of 5 bits."""

    name: str
    bits: int

    @property
    def max_value(self) -> int:
        return (1 << self.bits) - 1


@dataclass(frozen=True)
class DecodedId:
    """The parts of one id under one layout."""

    value: int
    tick: int
    time: datetime
    node: int
    parts: dict[str, int]
    sequence: int
    layout: Layout = field(repr=False)
    shard: int = 0

    def as_dict(self) -> dict[str, Any]:
        """A JSON-safe mapping. The id is a string: JSON readers parse numbers as doubles."""
        return {
            "id": str(self.value),
            "layout": self.layout.name,
            "time": iso_utc(self.time, milliseconds=True),
            "tick": self.tick,
            "node": self.node,
            "parts": dict(self.parts),
            "sequence": self.sequence,
            **({"shard": self.shard} if self.layout.shard_bits else {}),
        }


def _within(value: object, largest: int) -> TypeGuard[int]:
    """Whether ``value`` is an integer (a bool is not one) in ``0..largest``."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= largest


def _refusal(
    value: object,
    largest: int,
    not_an_integer: str,
    out_of_range: str,
    error: type[Exception] = LayoutError,
    **names: object,
) -> Exception:
    """The error for ``value``, not :func:`_within` ``0..largest``: one of two message
    templates (no integer, out of range), filled with ``value``, ``largest`` and ``names``."""
    integer = isinstance(value, int) and not isinstance(value, bool)
    message = out_of_range if integer else not_an_integer
    return error(message.format(value=value, largest=largest, **names))


@dataclass(frozen=True)
class Layout:
    """How the 63 usable bits of an id are split: ``node_parts`` from the most significant,
    ``shard_bits`` (default 0) below the sequence; each tick's sequence starts at a random
    offset below ``2**spread_bits`` (``None``: :func:`default_spread_bits`)."""

    time_bits: int
    node_parts: tuple[NodePart, ...]
    sequence_bits: int
    epoch: datetime = DEFAULT_EPOCH
    time_unit_ms: int = 1
    name: str = field(default="custom", compare=False)
    shard_bits: int = 0
    spread_bits: int | None = None
    # Sizes, shifts and masks, computed once by __post_init__.
    node_bits: int = field(init=False, repr=False, compare=False)
    total_bits: int = field(init=False, repr=False, compare=False)
    node_shift: int = field(init=False, repr=False, compare=False)
    time_shift: int = field(init=False, repr=False, compare=False)
    max_shard: int = field(init=False, repr=False, compare=False)
    max_sequence: int = field(init=False, repr=False, compare=False)
    max_node: int = field(init=False, repr=False, compare=False)
    max_tick: int = field(init=False, repr=False, compare=False)
    max_id: int = field(init=False, repr=False, compare=False)
    id_step: int = field(init=False, repr=False, compare=False)
    node_span: int = field(init=False, repr=False, compare=False)
    epoch_ns: int = field(init=False, repr=False, compare=False)
    epoch_ms: int = field(init=False, repr=False, compare=False)
    unit_ns: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epoch", parse_epoch(self.epoch))
        object.__setattr__(self, "node_parts", tuple(self.node_parts))
        self._check_widths()
        self._measure()
        if self.spread_bits is None:
            object.__setattr__(self, "spread_bits", default_spread_bits(self.sequence_bits))
        elif not _within(self.spread_bits, self.sequence_bits):
            raise LayoutError(
                f"spread_bits must be an integer from 0 to sequence_bits ({self.sequence_bits}), "
                f"not {self.spread_bits!r}."
            )
        self._check_fits()

    def _check_widths(self) -> None:
        for label, bits, lowest in (
            ("time_bits", self.time_bits, 1),
            ("sequence_bits", self.sequence_bits, 0),
            ("time_unit_ms", self.time_unit_ms, 1),
            ("shard_bits", self.shard_bits, 0),
        ):
            if not isinstance(bits, int) or isinstance(bits, bool) or bits < lowest:
                raise LayoutError(f"{label} must be an integer >= {lowest}, not {bits!r}.")
        seen: set[str] = set()
        for part in self.node_parts:
            if not isinstance(part, NodePart):
                raise LayoutError(f"Node parts must be NodePart instances, not {part!r}.")
            if not part.name.isidentifier() or part.name in seen:
                raise LayoutError(f"Node part name {part.name!r} is not a unique identifier.")
            if not isinstance(part.bits, int) or isinstance(part.bits, bool) or part.bits < 1:
                raise LayoutError(
                    f"Node part {part.name!r} needs at least 1 bit, not {part.bits!r}."
                )
            seen.add(part.name)

    def _check_fits(self) -> None:
        """The bits fit a signed BIGINT, and every tick decodes to a datetime."""
        if self.total_bits > MAX_BITS:
            raise LayoutError(
                f"The layout {self.describe()} needs {self.total_bits} bits; at most "
                f"{MAX_BITS} fit (the sign bit of a BIGINT stays 0)."
            )
        try:
            self.exhausted_at  # noqa: B018
        except OverflowError:
            raise LayoutError(
                f"The time bits of layout {self.describe()} reach past the year 9999; "
                "use fewer time bits or a shorter time unit."
            ) from None

    def _measure(self) -> None:
        node_bits = sum(part.bits for part in self.node_parts)
        node_shift = self.sequence_bits + self.shard_bits
        total_bits = self.time_bits + node_bits + node_shift
        epoch_ns = (self.epoch - UNIX_EPOCH) // _ONE_MICROSECOND * 1000
        for name, value in (
            ("node_bits", node_bits),
            ("total_bits", total_bits),
            ("node_shift", node_shift),
            ("time_shift", node_shift + node_bits),
            ("max_shard", (1 << self.shard_bits) - 1),
            ("max_sequence", (1 << self.sequence_bits) - 1),
            ("max_node", (1 << node_bits) - 1),
            ("max_tick", (1 << self.time_bits) - 1),
            ("max_id", (1 << total_bits) - 1),
            ("id_step", 1 << self.shard_bits),
            ("node_span", 1 << node_shift),
            ("epoch_ns", epoch_ns),
            ("epoch_ms", epoch_ns // 1_000_000),
            ("unit_ns", self.time_unit_ms * 1_000_000),
        ):
            object.__setattr__(self, name, value)

    @property
    def ids_per_second(self) -> int:
        """The most ids one worker can issue in a second."""
        return (self.max_sequence + 1) * 1000 // self.time_unit_ms

    @property
    def exhausted_at(self) -> datetime:
        """The first instant the time bits cannot represent."""
        return self.epoch + timedelta(milliseconds=(self.max_tick + 1) * self.time_unit_ms)

    def describe(self) -> str:
        unit = f"{self.time_unit_ms} ms"
        nodes = "".join(f" | {p.name} {p.bits}" for p in self.node_parts)
        spread = f" (spread {self.spread_bits})" if self.spread_bits else ""
        shard = f" | shard {self.shard_bits}" if self.shard_bits else ""
        return (
            f"time {self.time_bits} ({unit}){nodes} | sequence {self.sequence_bits}{spread}{shard}"
        )

    def tick_at(self, moment: datetime) -> int:
        """The tick (time units since the epoch) that contains ``moment``."""
        if moment.tzinfo is None:
            raise LayoutError(f"{moment.isoformat()} is naive; give an aware datetime.")
        return (moment - self.epoch) // timedelta(milliseconds=self.time_unit_ms)

    def time_of_tick(self, tick: int) -> datetime:
        return self.epoch + timedelta(milliseconds=tick * self.time_unit_ms)

    def tick_of_ns(self, ns: int) -> int:
        """The tick that contains ``ns`` (nanoseconds since the Unix epoch)."""
        return (ns - self.epoch_ns) // self.unit_ns

    def ns_of_tick(self, tick: int) -> int:
        """When ``tick`` starts, in nanoseconds since the Unix epoch."""
        return self.epoch_ns + tick * self.unit_ns

    def ms_after_tick(self, tick: int) -> int:
        """When ``tick`` ends, in Unix milliseconds rounded up."""
        return -(-self.ns_of_tick(tick + 1) // 1_000_000)

    def tick_before_ms(self, ms: int) -> int:
        """The last tick that starts before the Unix time ``ms`` (-1 at the earliest)."""
        return max(-(-(ms * 1_000_000 - self.epoch_ns) // self.unit_ns) - 1, -1)

    def base(self, tick: int, node: int) -> int:
        """The smallest id of ``node`` in ``tick`` (sequence and shard 0)."""
        return (tick << self.time_shift) | (node << self.node_shift)

    def min_id_at(self, moment: datetime) -> int:
        """The smallest id any worker can issue in the tick containing ``moment``, clamped
        to the id range."""
        tick = min(max(self.tick_at(moment), 0), self.max_tick + 1)
        return min(tick << self.time_shift, self.max_id + 1)

    def max_id_at(self, moment: datetime) -> int:
        """The largest id any worker can issue in the tick containing ``moment``."""
        return self.min_id_at(moment + timedelta(milliseconds=self.time_unit_ms)) - 1

    def node_value(self, worker: int | Mapping[str, int]) -> int:
        """The node field for a worker given as one integer or as its named parts."""
        if isinstance(worker, Mapping):
            names = [p.name for p in self.node_parts]
            unknown = sorted(set(worker) - set(names))
            missing = [n for n in names if n not in worker]
            if unknown or missing:
                raise LayoutError(
                    f"Worker id {dict(worker)!r} must name exactly the node parts {names} "
                    f"of layout {self.name!r} (unknown: {unknown}, missing: {missing})."
                )
            node = 0
            for part in self.node_parts:
                value = worker[part.name]
                if not _within(value, part.max_value):
                    raise _refusal(
                        value,
                        part.max_value,
                        "Node part {part!r} must be an integer, not {value!r}.",
                        "Node part {part!r}={value} is out of range 0..{largest} ({bits} bits) "
                        "in layout {layout!r}.",
                        part=part.name,
                        bits=part.bits,
                        layout=self.name,
                    )
                node = (node << part.bits) | value
            return node
        if not _within(worker, self.max_node):
            raise _refusal(
                worker,
                self.max_node,
                "A worker id must be an integer or a mapping, not {value!r}.",
                "Worker id {value} is out of range 0..{largest} ({bits} node bits) in layout "
                "{layout!r}.",
                bits=self.node_bits,
                layout=self.name,
            )
        return worker

    def split_node(self, node: int) -> dict[str, int]:
        parts: dict[str, int] = {}
        for part in reversed(self.node_parts):
            parts[part.name] = node & part.max_value
            node >>= part.bits
        return dict(reversed(parts.items()))

    def shard_of(self, value: int) -> int:
        """The shard part ``value`` (a user id, or an id of this layout) puts in an id."""
        return value & self.max_shard

    def compose(self, tick: int, node: int, sequence: int, shard: int = 0) -> int:
        if not 0 <= tick <= self.max_tick:
            raise LayoutError(f"Tick {tick} is out of range 0..{self.max_tick}.")
        if not 0 <= node <= self.max_node:
            raise LayoutError(f"Node {node} is out of range 0..{self.max_node}.")
        if not 0 <= sequence <= self.max_sequence:
            raise LayoutError(f"Sequence {sequence} is out of range 0..{self.max_sequence}.")
        if not 0 <= shard <= self.max_shard:
            raise LayoutError(
                f"Shard {shard} is out of range 0..{self.max_shard} ({self.shard_bits} shard bits)."
            )
        return self.base(tick, node) | (sequence << self.shard_bits) | shard

    def check_id(self, value: object) -> int:
        """Return ``value`` (an int, or ASCII digits) as an int id of this layout, or raise
        :class:`InvalidId`."""
        if isinstance(value, str):
            value = parse_digits(value, what="an id")
        if not _within(value, self.max_id):
            raise _refusal(
                value,
                self.max_id,
                "{value!r} is not an id: expected an integer in 0..{largest}.",
                "{value} is out of range for layout {layout!r}: valid ids are 0..{largest} "
                "({bits} bits).",
                InvalidId,
                bits=self.total_bits,
                layout=self.name,
            )
        return value

    def decode(self, value: int | str) -> DecodedId:
        number = self.check_id(value)
        sequence = (number >> self.shard_bits) & self.max_sequence
        node = (number >> self.node_shift) & self.max_node
        tick = number >> self.time_shift
        return DecodedId(
            value=number,
            tick=tick,
            time=self.time_of_tick(tick),
            node=node,
            parts=self.split_node(node),
            sequence=sequence,
            layout=self,
            shard=number & self.max_shard,
        )


def default_spread_bits(sequence_bits: int) -> int:
    """The spread of a layout that names none: 4 bits (``id % 16`` routes evenly), at most
    ``sequence_bits - 3`` so that an offset never takes more than an eighth of a tick."""
    return max(0, min(4, sequence_bits - 3))


def _parts(spec: Iterable[Any] | Mapping[str, int]) -> tuple[NodePart, ...]:
    items: Iterable[Any] = spec.items() if isinstance(spec, Mapping) else spec
    parts = []
    for item in items:
        try:
            name, bits = item
        except (TypeError, ValueError):
            raise LayoutError(f"A node part is a (name, bits) pair, not {item!r}.") from None
        parts.append(NodePart(str(name), bits))
    return tuple(parts)


def _preset(
    name: str, time_bits: int, nodes: dict[str, int], seq: int, unit: int = 1, shard: int = 0
) -> Layout:
    return Layout(time_bits, _parts(nodes), seq, time_unit_ms=unit, name=name, shard_bits=shard)


#: Ready-made layouts, by name. All use the default epoch unless one is given.
PRESETS: dict[str, Layout] = {
    # Twitter's 41/10/12 with the ten node bits as one worker id (1,024 workers).
    "classic": _preset("classic", 41, {"worker": 10}, 12),
    # The same bits, split into 32 datacenters x 32 machines.
    "datacenter": _preset("datacenter", 41, {"datacenter": 5, "machine": 5}, 12),
    # 32 servers x 32 business lines.
    "server-business": _preset("server-business", 41, {"server": 5, "business": 5}, 12),
    # Sonyflake-like: 10 ms ticks, 16-bit machine id, 256 ids a tick (39+16+8 = 63).
    "sonyflake": _preset("sonyflake", 39, {"machine": 16}, 8, unit=10),
    # Fits a JavaScript number (at most 2**53 - 1): 32 workers, 128 ids a millisecond.
    "js53": _preset("js53", 41, {"worker": 5}, 7),
    # Ids that carry the low 4 bits of a user id (16 shards, `id % 16 == user_id % 16`):
    # 64 workers, 4,096 ids a millisecond each.
    "sharded": _preset("sharded", 41, {"worker": 6}, 12, shard=4),
}

_SPEC_KEYS = {
    "time_bits",
    "node",
    "sequence_bits",
    "shard_bits",
    "spread_bits",
    "time_unit_ms",
    "epoch",
    "preset",
}


def layout_from_spec(
    spec: str | Mapping[str, Any] | Layout, *, epoch: datetime | str | None = None, name: str = ""
) -> Layout:
    """Build a layout from a preset name, a mapping of the keys docs "Layouts" lists, or a
    :class:`Layout`; ``epoch`` applies where the spec names none."""
    if isinstance(spec, Layout):
        # A Layout object carries its own epoch; only its name may change.
        return replace(spec, name=name) if name else spec
    base, values = _preset_and_keys(spec)
    chosen_epoch = values.get("epoch", epoch if epoch is not None else base.epoch if base else None)
    return Layout(
        time_bits=values.get("time_bits", base.time_bits if base else 0),
        node_parts=_parts(values["node"]) if "node" in values or base is None else base.node_parts,
        sequence_bits=values.get("sequence_bits", base.sequence_bits if base else 0),
        epoch=chosen_epoch if chosen_epoch is not None else DEFAULT_EPOCH,
        time_unit_ms=values.get("time_unit_ms", base.time_unit_ms if base else 1),
        shard_bits=values.get("shard_bits", base.shard_bits if base else 0),
        # A preset's spread, unless its sequence_bits change (then their default).
        spread_bits=values.get(
            "spread_bits",
            base.spread_bits if base is not None and "sequence_bits" not in values else None,
        ),
        name=name or (base.name if base is not None and not values else "custom"),
    )


def _preset_and_keys(spec: object) -> tuple[Layout | None, dict[str, Any]]:
    """The preset a spec starts from (``None``: none) and the keys it sets."""
    if isinstance(spec, str):
        if spec not in PRESETS:
            raise LayoutError(f"Unknown layout preset {spec!r}; presets are {sorted(PRESETS)}.")
        return PRESETS[spec], {}
    if not isinstance(spec, Mapping):
        raise LayoutError(f"A layout is a preset name or a mapping, not {spec!r}.")
    unknown = sorted(set(spec) - _SPEC_KEYS)
    if unknown:
        raise LayoutError(f"Unknown layout keys {unknown}; expected some of {sorted(_SPEC_KEYS)}.")
    preset = spec.get("preset")
    if preset is not None and preset not in PRESETS:
        raise LayoutError(f"Unknown layout preset {preset!r}; presets are {sorted(PRESETS)}.")
    if preset is None:
        missing = [k for k in ("time_bits", "node", "sequence_bits") if k not in spec]
        if missing:
            raise LayoutError(f"The layout {dict(spec)!r} lacks {missing}.")
    return (None if preset is None else PRESETS[preset]), dict(spec)
