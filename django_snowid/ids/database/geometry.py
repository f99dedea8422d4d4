"""The geometry of a layout: what the database function needs of it (epoch, unit, bit
widths), the names of the function and sequence made for it, and a key that spells every
number (layouts that split their bits alike share one)."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property

from ...core.layout import UNIX_EPOCH, Layout, NodePart
from ...exceptions import LayoutError

__all__ = ["Geometry"]

_KEY = re.compile(r"e(\d+)_u(\d+)_t(\d+)_n(\d+)_q(\d+)_h(\d+)_s(\d+)")


@dataclass(frozen=True)
class Geometry:
    epoch_ms: int
    unit_ms: int
    time_bits: int
    node_bits: int
    sequence_bits: int
    shard_bits: int
    spread_bits: int

    @classmethod
    def of(cls, layout: Layout) -> Geometry:
        return cls(
            layout.epoch_ms,
            layout.time_unit_ms,
            layout.time_bits,
            layout.node_bits,
            layout.sequence_bits,
            layout.shard_bits,
            layout.spread_bits or 0,
        )

    @classmethod
    def from_key(cls, key: str) -> Geometry:
        match = _KEY.fullmatch(key)
        if match is None:
            raise LayoutError(f"{key!r} is not the key of a layout geometry.")
        return cls(*(int(part) for part in match.groups()))

    @property
    def key(self) -> str:
        return (
            f"e{self.epoch_ms}_u{self.unit_ms}_t{self.time_bits}_n{self.node_bits}"
            f"_q{self.sequence_bits}_h{self.shard_bits}_s{self.spread_bits}"
        )

    # ------------------------------------------------------------ names
    @property
    def function(self) -> str:
        """The column default's function: ``snowid_next_id_<key>``."""
        return f"snowid_next_id_{self.key}"

    @property
    def advance_function(self) -> str:
        """The PL/pgSQL helper that moves the sequence to a new tick."""
        return f"snowid_advance_{self.key}"

    @property
    def sequence(self) -> str:
        """The sequence whose value is the last id the database issued."""
        return f"snowid_seq_{self.key}"

    @property
    def lock_key(self) -> int:
        """The advisory-lock key of the helper (one per geometry and database)."""
        return 0x5350_0000_0000 | zlib.crc32(self.key.encode())

    # ------------------------------------------------------------ bits
    @cached_property
    def layout(self) -> Layout:
        """A layout of this geometry (one node part, ``node``)."""
        return Layout(
            self.time_bits,
            (NodePart("node", self.node_bits),) if self.node_bits else (),
            self.sequence_bits,
            epoch=UNIX_EPOCH + timedelta(milliseconds=self.epoch_ms),
            time_unit_ms=self.unit_ms,
            shard_bits=self.shard_bits,
            spread_bits=self.spread_bits,
        )

    @property
    def node_shift(self) -> int:
        return self.layout.node_shift

    @property
    def time_shift(self) -> int:
        return self.layout.time_shift

    @property
    def step(self) -> int:
        """Consecutive ids of a tick differ by this much (the shard bits stay 0)."""
        return self.layout.id_step

    @property
    def span(self) -> int:
        """The values one node's ids of one tick cover."""
        return self.layout.node_span

    def base(self, tick: int, node: int) -> int:
        return self.layout.base(tick, node)
