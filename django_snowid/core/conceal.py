"""Concealed sequences: a keyed permutation of the sequences of each second
(:class:`SequenceCipher`, a Feistel network with per-second round tables)."""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Callable
from typing import Any, Final

from ..exceptions import InvalidId, LayoutError
from .key_schedule import MIN_KEY_LENGTH, KeySchedule

__all__ = ["MIN_KEY_LENGTH", "ROUNDS", "TABLE_BUDGET", "KeySchedule", "SequenceCipher"]

#: Feistel rounds (even: the halves come back to their sizes).
ROUNDS: Final = 8
#: The bytes of round tables a cipher keeps (the most recent seconds', at least two).
TABLE_BUDGET: Final = 3 << 19  # 1.5 MiB
# Domains this small are shuffled whole, once per second, instead of by rounds.
_SHUFFLE_BELOW: Final = 64
_MAX_SECONDS: Final = 256
_SWAP = sys.byteorder == "big"


class SequenceCipher:
    """A keyed permutation of ``1..radix**width - 1`` for each second.

    ``unix_of(second)`` turns the caller's (local) second into the Unix second that picks
    the key; ``tweak`` keeps formats apart. Recent seconds' tables are kept, within
    :data:`TABLE_BUDGET`.
    """

    def __init__(
        self,
        keys: KeySchedule,
        *,
        radix: int,
        width: int,
        tweak: bytes,
        unix_of: Callable[[int], int],
    ) -> None:
        self.keys = keys
        self.domain = radix**width
        self._tweak = tweak
        self._unix_of = unix_of
        self._shuffle = self.domain < _SHUFFLE_BELOW
        low = width // 2
        self._low = radix**low  # the size of the left half of a number of even rounds
        self._high = self.domain // self._low
        self._sizes = [self._high if r % 2 == 0 else self._low for r in range(ROUNDS)]
        per_second = 2 * self.domain if self._shuffle else 4 * sum(self._sizes) + 80 * ROUNDS
        #: How many seconds' tables are kept.
        self.seconds_kept = max(2, min(_MAX_SECONDS, TABLE_BUDGET // per_second))
        self._tables: dict[int, Any] = {}
        self._last: tuple[int, Any] = (-(2**62), None)

    def __repr__(self) -> str:
        return f"<SequenceCipher over 1..{self.domain - 1}, {self.keys!r}>"

    def __copy__(self) -> SequenceCipher:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> SequenceCipher:
        return self

    def _rounds(self, second: int) -> Any:
        last = self._last
        if last[0] == second:
            return last[1]
        tables = self._tables.get(second)
        if tables is None:
            tables = self._make(second)
            if len(self._tables) >= self.seconds_kept:
                del self._tables[next(iter(self._tables))]  # the oldest made
            self._tables[second] = tables
        self._last = (second, tables)
        return tables

    def _stream(self, second: int, size: int) -> bytes:
        keys = self.keys
        material = self._tweak + second.to_bytes(8, "big", signed=True)
        return keys.stream(keys.index_at(self._unix_of(second)), material, size)

    def _make(self, second: int) -> Any:
        if self._shuffle:
            ranks = struct.unpack(f"<{self.domain}Q", self._stream(second, 8 * self.domain))
            forward = [0, *sorted(range(1, self.domain), key=ranks.__getitem__)]
            backward = [0] * self.domain
            for position, value in enumerate(forward):
                backward[value] = position
            return bytes(forward), bytes(backward)
        words = array("I")
        if words.itemsize != 4:  # pragma: no cover - every platform CPython runs on today
            words = array("L")
        words.frombytes(self._stream(second, 4 * sum(self._sizes)))
        if _SWAP:  # pragma: no cover - big-endian machines
            words.byteswap()
        # Each round's table, and the modulus of its sums (the other half's size).
        tables = []
        offset = 0
        for size in self._sizes:
            modulus = self._high + self._low - size
            tables.append((words[offset : offset + size], modulus))
            offset += size
        return tuple(tables)

    def conceal(self, second: int, sequence: int) -> int:
        """The sequence shown for true ``sequence`` (1..domain-1) of ``second``."""
        if not 0 < sequence < self.domain:
            raise LayoutError(f"Sequence {sequence} is out of range 1..{self.domain - 1}.")
        tables = self._rounds(second)
        if self._shuffle:
            return int(tables[0][sequence])
        high = self._high
        value = sequence
        while True:
            left, right = divmod(value, high)  # left in [0, low), right in [0, high)
            for table, modulus in tables:
                left, right = right, (left + table[right]) % modulus
            value = left * high + right
            if value:
                return value

    def reveal(self, second: int, shown: int) -> int:
        """The true sequence of the number of ``second`` that shows ``shown``."""
        if not 0 < shown < self.domain:
            raise InvalidId(
                f"Shown sequence {shown} is out of range 1..{self.domain - 1}: not a sequence "
                "of this format."
            )
        tables = self._rounds(second)
        if self._shuffle:
            return int(tables[1][shown])
        high = self._high
        value = shown
        while True:
            left, right = divmod(value, high)
            for table, modulus in reversed(tables):
                left, right = (right - table[left]) % modulus, left
            value = left * high + right
            if value:
                return value
