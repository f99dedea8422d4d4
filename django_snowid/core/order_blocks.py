"""Blocks of order numbers: how many numbers of the current second a process asks its store
for (:class:`BlockSizer`) and how many the store grants (:func:`grant`). Pure: the caller
gives every time."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

__all__ = ["BLOCK_SHARE", "Block", "BlockSizer", "grant"]

#: A block takes at most this fraction (1/N) of what is left of its second.
BLOCK_SHARE: Final = 8


@dataclass(frozen=True)
class Block:
    """Numbers ``first_sequence`` .. ``first_sequence + count - 1`` of ``local_second``,
    reserved for one process; usable for ``ms_left`` milliseconds (the rest of the
    second on the store's clock), abandoned after."""

    local_second: int
    first_sequence: int
    count: int
    ms_left: int


def grant(room: int, wanted: int) -> int:
    """How many numbers a block of ``wanted`` gets when ``room`` are left in its second:
    at most one :data:`BLOCK_SHARE`-th of ``room``, at least one while ``room`` is not 0."""
    if room <= 0:
        return 0
    return max(1, min(wanted, room // BLOCK_SHARE))


class BlockSizer:
    """The size of a process's next block of one stream, from what its blocks saw.

    Not thread-safe on its own: the caller serializes (one lock per stream and process).
    """

    __slots__ = ("_second", "_used", "maximum", "rate", "size")

    def __init__(self, maximum: int) -> None:
        if maximum < 1:
            raise ValueError(f"a block holds at least 1 number, not {maximum}")
        self.maximum = maximum
        #: The size of the next block before the rate's cap.
        self.size = 1
        #: Numbers used in the last second that saw any (0: none measured yet).
        self.rate = 0
        self._second = -1
        self._used = 0

    def wanted(self, ms_left: float) -> int:
        """How many numbers to ask for when ``ms_left`` milliseconds of the second are
        left on this process's clock."""
        size = self.size
        if self.rate and size > 1:
            size = min(size, max(1, math.ceil(self.rate * max(ms_left, 0.0) / 1000)))
        return size

    def ended(self, block: Block, used: int, *, ran_out: bool, now_second: int) -> None:
        """A block ended: ``used`` of its numbers were handed out; ``ran_out``: all of
        them, and the process wants another number at local second ``now_second``."""
        self._count(block.local_second, used)
        if ran_out and now_second == block.local_second:
            self.size = min(self.maximum, self.size * 2)
        elif used < block.count:
            self.size = max(1, self.size // 2)

    def _count(self, second: int, used: int) -> None:
        if second == self._second:
            self._used += used
            return
        if second > self._second:
            if self._second >= 0:
                gap = second - self._second
                # A quiet stretch lowers the rate: numbers over the seconds since.
                self.rate = self._used // gap if gap > 1 else self._used
            self._second, self._used = second, used
