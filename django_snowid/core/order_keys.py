"""Which key conceals which second of a stream: a process's :class:`KeyWindow`, the
stream's :class:`KeyRecord` (kept by its store), and :func:`agree`, the rule every store
applies before it issues (the Redis store in Lua)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from .key_schedule import FIRST, KeySchedule

__all__ = [
    "NEVER",
    "KeyConflict",
    "KeyRecord",
    "KeyWindow",
    "OutsideWindow",
    "agree",
    "key_window",
]

#: The end of a window no key follows (exact in Lua's doubles).
NEVER: Final = 2**52


@dataclass(frozen=True)
class KeyWindow:
    """A process conceals the local seconds ``start`` .. ``end - 1`` with key ``key_id``;
    from ``end`` on with ``next_id`` ("" and :data:`NEVER`: no key follows)."""

    key_id: str
    start: int
    end: int = NEVER
    next_id: str = ""

    def as_args(self) -> tuple[str, int, int, str]:
        return (self.key_id, self.start, self.end, self.next_id)


@dataclass(frozen=True)
class KeyRecord:
    """What a stream's store records: the key of the seconds issued (``key_id``; "" none
    yet), and a key announced to take over at local second ``next_from`` (``next_id``)."""

    key_id: str = ""
    next_id: str = ""
    next_from: int = 0


@dataclass(frozen=True)
class OutsideWindow:
    """``second`` is outside the process's window: nothing was reserved."""

    second: int


@dataclass(frozen=True)
class KeyConflict:
    """The stream conceals ``second`` with ``key_id``, and cannot switch to the process's
    key (its ``last_second`` is not before that key starts): nothing was reserved."""

    second: int
    key_id: str
    last_second: int


def agree(
    record: KeyRecord, last_second: int, second: int, window: KeyWindow
) -> KeyRecord | OutsideWindow | KeyConflict:
    """The record once numbers of ``second`` are concealed with ``window``'s key, or why
    they must not be (``last_second``: the stream's second before). The window's key
    must be the record's (after an announced key took over), or start after every number
    issued; the window's next key is announced (the latest announcement wins).
    """
    if not window.start <= second < window.end:
        return OutsideWindow(second)
    key_id, next_id, next_from = record.key_id, record.next_id, record.next_from
    if next_id and second >= next_from:
        key_id, next_id, next_from = next_id, "", 0
    if window.key_id != key_id:
        if key_id and last_second >= window.start:
            return KeyConflict(second, key_id, last_second)
        key_id = window.key_id
    if window.next_id:
        next_id, next_from = window.next_id, window.end
    return KeyRecord(key_id, next_id, next_from)


def key_window(keys: KeySchedule, second: int, unix_of: Callable[[int], int]) -> KeyWindow:
    """The window of local ``second`` in ``keys`` (``unix_of``: the cipher's mapping)."""
    index = keys.index_at(unix_of(second))
    start = FIRST if index == 0 else _local_start(keys.starts[index], second, unix_of)
    if index + 1 == len(keys):
        return KeyWindow(keys.key_id(index), start)
    end = _local_start(keys.starts[index + 1], second, unix_of)
    return KeyWindow(keys.key_id(index), start, end, keys.key_id(index + 1))


def _local_start(unix: int, near: int, unix_of: Callable[[int], int]) -> int:
    """The first local second whose Unix second is at or after ``unix``; ``near``: a local
    second of about the same zone offset."""
    guess = unix + (near - unix_of(near))
    while unix_of(guess) < unix:
        guess += 1
    while unix_of(guess - 1) >= unix:
        guess -= 1
    return guess
