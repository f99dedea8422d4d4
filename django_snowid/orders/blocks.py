"""One process's block of one stream: numbers of the current second reserved in one store
call, handed out with no round trip while the second lasts; dropped on fork and recovery."""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import Final

from ..core.clocks import real_time
from ..core.order_blocks import Block, BlockSizer

__all__ = ["BlockIssuer"]

_NONE: Final = Block(0, 0, 0, 0)


class BlockIssuer:
    """Hands out the numbers of one stream's blocks in this process; thread-safe.

    ``take()`` answers a position of the held block, or ``None``: :meth:`reserve` the
    next one, under :attr:`lock`, which keeps the numbers a process hands out increasing.
    """

    def __init__(
        self,
        maximum: int,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = real_time,
    ) -> None:
        self.sizer = BlockSizer(maximum)
        self.monotonic = monotonic
        self.wall = wall
        #: Serializes the reservations of this stream in this process.
        self.lock = threading.RLock()
        self._block = _NONE
        self._next = 0  # the sequence of the block's next number
        self._end = 0  # one past the block's last sequence
        self._deadline = 0.0
        self._floor = (0, 0)  # the highest position issued without a block
        self.abandoned = 0
        self.blocks = 0
        self.reserved = 0
        _all.add(self)

    def take(self) -> tuple[int, int] | None:
        """The next position of the held block (local second, sequence), or ``None``."""
        with self.lock:
            return self._take()

    def _take(self) -> tuple[int, int] | None:
        sequence = self._next
        if sequence < self._end and self.monotonic() < self._deadline:
            self._next = sequence + 1
            return self._block.local_second, sequence
        return None

    def take_run(
        self, count: int, offset: int, call: Callable[[int], object]
    ) -> list[tuple[int, int, int]]:
        """Runs (local second, first sequence, count) of at most ``count`` numbers: the held
        block's, then those of a block ``call(wanted)`` reserves (the caller reserves any rest)."""
        with self.lock:
            runs = [run] if (run := self._take_run(count)) is not None else []
            left = count - (runs[0][2] if runs else 0)
            if left:
                wanted = left + self.wanted(offset)
                sent = self.monotonic()
                outcome = call(wanted)
                if type(outcome) is Block:
                    second, first = self.hold(outcome, sent)
                    more = self._take_run(left - 1)
                    runs.append((second, first, 1 + (more[2] if more is not None else 0)))
            return runs

    def _take_run(self, count: int) -> tuple[int, int, int] | None:
        start = self._next
        end = min(self._end, start + count)
        if start < end and self.monotonic() < self._deadline:
            self._next = end
            return self._block.local_second, start, end - start
        return None

    def reserve(self, offset: int, call: Callable[[int], object]) -> tuple[int, int] | None:
        """Under the lock: a position of a block another thread reserved meanwhile, else
        the first of ``call(wanted)``'s block (``None``: it answered no block)."""
        with self.lock:
            position = self._take()
            if position is not None:
                return position
            wanted = self.wanted(offset)
            sent = self.monotonic()
            outcome = call(wanted)
            if type(outcome) is Block:
                return self.hold(outcome, sent)
        return None

    def wanted(self, offset: int) -> int:
        """The size of the next block; the held one ends (numbers unused are abandoned).
        ``offset``: the zone's UTC offset (a local second is a Unix second plus it)."""
        now = self.wall()
        block = self._block
        if block.count:
            used = self._next - block.first_sequence
            ran_out = self._next >= self._end
            self.sizer.ended(block, used, ran_out=ran_out, now_second=int(now) + offset)
            self.abandoned += block.count - used
            self._block, self._next, self._end = _NONE, 0, 0
        return self.sizer.wanted(1000 - (now % 1) * 1000)

    def hold(self, block: Block, sent: float) -> tuple[int, int]:
        """Hold ``block``, reserved by a call sent at monotonic ``sent``; its first position."""
        self.blocks += 1
        self.reserved += block.count
        if (block.local_second, block.first_sequence) < self._floor:
            # Reserved before numbers another thread issued meanwhile: only its first serves.
            self.abandoned += block.count - 1
            return block.local_second, block.first_sequence
        self._block = block
        self._next = block.first_sequence + 1
        self._end = block.first_sequence + block.count
        self._deadline = sent + block.ms_left / 1000
        return block.local_second, block.first_sequence

    def passed(self, position: tuple[int, int]) -> None:
        """Numbers up to ``position`` were issued without a block: abandon the held block
        if it is below, and keep none below from now on."""
        with self.lock:
            if position > self._floor:
                self._floor = position
            if self._block.count and (self._block.local_second, self._next) < position:
                self._drop()

    def drop(self) -> None:
        """Abandon the held block (a recovery, a bulk reservation: nothing issued from it
        may come after what is issued next)."""
        with self.lock:
            self._drop()

    def _drop(self) -> None:
        block = self._block
        if block.count:
            self.abandoned += self._end - self._next
        self._block, self._next, self._end = _NONE, 0, 0

    @property
    def size(self) -> int:
        """The size the next block would ask for, before the rate's cap."""
        return self.sizer.size

    def _after_fork_in_child(self) -> None:
        self.lock = threading.RLock()  # another thread may have held it at the fork
        self._block, self._next, self._end = _NONE, 0, 0
        self._floor = (0, 0)
        self.abandoned = self.blocks = self.reserved = 0


_all: weakref.WeakSet[BlockIssuer] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for issuer in list(_all):
        issuer._after_fork_in_child()


os.register_at_fork(after_in_child=_after_fork_in_child)
