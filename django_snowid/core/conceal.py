"""Concealed sequences: a keyed permutation of the sequences of each second
(:class:`SequenceCipher`, a Feistel network with per-second round tables) and the key
schedule that says which key a second uses (:class:`KeySchedule`). Keys are never shown."""

from __future__ import annotations

import bisect
import hashlib
import struct
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, Final

from ..exceptions import LayoutError

__all__ = ["MIN_KEY_LENGTH", "ROUNDS", "KeySchedule", "SequenceCipher"]

#: The fewest characters (or bytes) of a key.
MIN_KEY_LENGTH: Final = 32
#: Feistel rounds (even: the halves come back to their sizes).
ROUNDS: Final = 8
# Domains this small are shuffled whole, once per second, instead of by rounds.
_SHUFFLE_BELOW: Final = 64
# Round tables (or shuffles) of this many recent seconds are kept.
_CACHED_SECONDS: Final = 256


def _secret(key: object, where: str) -> bytes:
    if isinstance(key, str):
        raw = key.encode()
        length = len(key)
    elif isinstance(key, bytes):
        raw, length = key, len(key)
    else:
        raise LayoutError(f"{where} is a {type(key).__name__}; expected a string or bytes.")
    if length < MIN_KEY_LENGTH:
        raise LayoutError(
            f"{where} is {length} characters long; a key needs at least {MIN_KEY_LENGTH} "
            "(a random one: python -c 'import secrets; print(secrets.token_urlsafe(32))')."
        )
    # What the cipher keeps: a digest of the key, never the key.
    return hashlib.sha256(b"django-snowid order-number key\x00" + raw).digest()


def _start(text: object, where: str) -> int:
    if isinstance(text, datetime):
        moment = text
    elif isinstance(text, str):
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise LayoutError(f"{where}: {text!r} is not an ISO 8601 date-time.") from None
    else:
        raise LayoutError(f"{where} is a {type(text).__name__}; expected an ISO 8601 date-time.")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp())


class KeySchedule:
    """The keys of concealed numbers, each from the second it starts at (UTC).

    Built by :meth:`parse` from one key (a string of at least :data:`MIN_KEY_LENGTH`
    characters: every number uses it) or a list of ``(valid_from, key)`` pairs in
    increasing ``valid_from`` (ISO 8601, UTC unless it says otherwise): a number uses the
    last key whose ``valid_from`` is not after its second, the first key the seconds before
    it. Equal schedules compare equal; neither ``repr()`` nor errors show a key.
    """

    __slots__ = ("_fingerprint", "_secrets", "_starts")

    def __init__(self, entries: Sequence[tuple[int, bytes]]) -> None:
        if not entries:
            raise LayoutError("A key schedule needs at least one key.")
        self._starts = [start for start, _ in entries]
        self._secrets = [secret for _, secret in entries]
        digest = hashlib.sha256()
        for start, secret in entries:
            digest.update(start.to_bytes(8, "big", signed=True) + secret)
        self._fingerprint = digest.digest()

    @classmethod
    def parse(cls, value: object, *, name: str = "the key") -> KeySchedule:
        """The schedule of ``value``: a key, or a list of ``(valid_from, key)`` pairs."""
        if isinstance(value, str | bytes):
            return cls([(-(2**62), _secret(value, name))])
        if not isinstance(value, list | tuple) or not value:
            raise LayoutError(
                f"{name} is {'empty' if value in ([], ()) else 'a ' + type(value).__name__}; "
                "expected a key (a string) or a list of (valid_from, key) pairs."
            )
        entries: list[tuple[int, bytes]] = []
        for index, pair in enumerate(value):
            where = f"entry {index} of {name}"
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise LayoutError(f"{where} is not a (valid_from, key) pair.")
            start = _start(pair[0], f"the valid_from of {where}")
            if entries and start <= entries[-1][0]:
                raise LayoutError(
                    f"The valid_from of {where} is not after the one before it: the entries "
                    "of a key schedule go from the oldest key to the newest."
                )
            entries.append((start, _secret(pair[1], f"the key of {where}")))
        return cls(entries)

    def secret_at(self, unix_second: int) -> bytes:
        """The (digest of the) key of the numbers of ``unix_second``."""
        index = bisect.bisect_right(self._starts, unix_second) - 1
        return self._secrets[max(index, 0)]

    def key_index_at(self, unix_second: int) -> int:
        """Which key (0 the first) conceals the numbers of ``unix_second``."""
        return max(bisect.bisect_right(self._starts, unix_second) - 1, 0)

    def __len__(self) -> int:
        return len(self._secrets)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeySchedule) and other._fingerprint == self._fingerprint

    def __hash__(self) -> int:
        return hash(self._fingerprint)

    def __repr__(self) -> str:
        return f"<KeySchedule of {len(self._secrets)} key(s)>"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("A key schedule is not pickled: it holds secrets.")


class SequenceCipher:
    """A keyed permutation of ``1..radix**width - 1`` for each second.

    ``unix_of(second)`` turns the caller's second (a format's local second) into the Unix
    second that picks the key; ``tweak`` (the format) keeps the permutations of formats
    apart.
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
        self._tables: dict[int, Any] = {}
        self._last: tuple[int, Any] = (-(2**62), None)

    def __repr__(self) -> str:
        return f"<SequenceCipher over 1..{self.domain - 1}, {self.keys!r}>"

    def _rounds(self, second: int) -> Any:
        last = self._last
        if last[0] == second:
            return last[1]
        tables = self._tables.get(second)
        if tables is None:
            tables = self._make(second)
            if len(self._tables) >= _CACHED_SECONDS:
                self._tables.clear()
            self._tables[second] = tables
        self._last = (second, tables)
        return tables

    def _make(self, second: int) -> Any:
        secret = self.keys.secret_at(self._unix_of(second))
        seed = secret + self._tweak + second.to_bytes(8, "big", signed=True)
        if self._shuffle:
            stream = hashlib.shake_256(seed).digest(8 * self.domain)
            ranks = struct.unpack(f"<{self.domain}Q", stream)
            forward = [0, *sorted(range(1, self.domain), key=ranks.__getitem__)]
            backward = [0] * self.domain
            for position, value in enumerate(forward):
                backward[value] = position
            return forward, backward
        sizes = [self._high if r % 2 == 0 else self._low for r in range(ROUNDS)]
        stream = hashlib.shake_256(seed).digest(4 * sum(sizes))
        values = struct.unpack(f"<{sum(sizes)}I", stream)
        tables = []
        offset = 0
        for size in sizes:
            tables.append(values[offset : offset + size])
            offset += size
        return tables

    def conceal(self, second: int, sequence: int) -> int:
        """The sequence shown for true ``sequence`` (1..domain-1) of ``second``."""
        tables = self._rounds(second)
        if self._shuffle:
            return int(tables[0][sequence])
        low, high = self._low, self._high
        value = sequence
        while True:
            left, right = divmod(value, high)  # left in [0, low), right in [0, high)
            for index, table in enumerate(tables):
                size = low if index % 2 == 0 else high
                left, right = right, (left + table[right]) % size
            value = left * high + right
            if value:
                return value

    def reveal(self, second: int, shown: int) -> int:
        """The true sequence of the number of ``second`` that shows ``shown``."""
        tables = self._rounds(second)
        if self._shuffle:
            return int(tables[1][shown])
        low, high = self._low, self._high
        value = shown
        while True:
            left, right = divmod(value, high)
            for index in range(ROUNDS - 1, -1, -1):
                size = low if index % 2 == 0 else high
                left, right = (right - tables[index][left]) % size, left
            value = left * high + right
            if value:
                return value
