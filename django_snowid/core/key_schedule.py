"""The keys of concealed numbers: which key a second uses (:class:`KeySchedule`), each kept
as a :class:`Secret` that no ``repr()``, error or frame local shows."""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any, Final

from ..exceptions import LayoutError

__all__ = ["FIRST", "MIN_KEY_LENGTH", "KeySchedule", "Secret"]

#: The fewest characters (or bytes) of a key.
MIN_KEY_LENGTH: Final = 32
#: The start of a schedule's first key: every second before the next key's.
FIRST: Final = -(2**62)
_KEY_LABEL: Final = b"django-snowid order-number key\x00"
_ID_LABEL: Final = b"django-snowid order-number key id\x00"


class Secret:
    """A key's digest, what the cipher is keyed with; its ``repr()`` shows nothing."""

    __slots__ = ("_value",)

    def __init__(self, value: bytes) -> None:
        self._value = value

    def __repr__(self) -> str:
        return "<secret>"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("A secret is not pickled.")


def _digest(key: object) -> Secret | str:
    """The :class:`Secret` of ``key``, or what is wrong with it. Never raises (a traceback
    would show this frame's key)."""
    try:
        if isinstance(key, str):
            length, raw = len(key), key.encode()
        elif isinstance(key, bytes):
            length, raw = len(key), key
        else:
            return f"a {type(key).__name__}; expected a string or bytes"
        if length < MIN_KEY_LENGTH:
            return (
                f"{length} characters long; a key needs at least {MIN_KEY_LENGTH} (a random "
                "one: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )
        return Secret(hashlib.sha256(_KEY_LABEL + raw).digest())
    except Exception:  # lone surrogates, a failing subclass
        return "not a key that can be encoded as UTF-8"


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


def _entries(value: object, name: str) -> list[tuple[int, Secret]] | str:
    """The entries of a schedule setting, or what is wrong with it; never raises."""
    try:
        if isinstance(value, str | bytes):
            secret = _digest(value)
            return [(FIRST, secret)] if isinstance(secret, Secret) else f"{name} is {secret}."
        if not isinstance(value, list | tuple) or not value:
            kind = "empty" if isinstance(value, list | tuple) else f"a {type(value).__name__}"
            return (
                f"{name} is {kind}; expected a key (a string) or a list of (valid_from, key) pairs."
            )
        entries: list[tuple[int, Secret]] = []
        for index in range(len(value)):
            entry = _entry(value[index], f"entry {index} of {name}")
            if entries and entry[0] <= entries[-1][0]:
                return (
                    f"The valid_from of entry {index} of {name} is not after the one before "
                    "it: the entries of a key schedule go from the oldest key to the newest."
                )
            entries.append(entry)
        return entries
    except LayoutError as exc:
        return str(exc)
    except Exception:
        return f"{name} cannot be read as a key or a list of (valid_from, key) pairs."


def _entry(pair: object, where: str) -> tuple[int, Secret]:
    """One ``(valid_from, key)`` pair, or :class:`LayoutError` (its caller catches it)."""
    if not isinstance(pair, list | tuple) or len(pair) != 2:
        raise LayoutError(f"{where} is not a (valid_from, key) pair.")
    start = _start(pair[0], f"the valid_from of {where}")
    secret = _digest(pair[1])
    if isinstance(secret, str):
        raise LayoutError(f"the key of {where} is {secret}.")
    return start, secret


class KeySchedule:
    """The keys of concealed numbers, each from the second it starts at (UTC).

    Built by :meth:`parse` from one key (a string of at least :data:`MIN_KEY_LENGTH`
    characters: every number uses it) or a list of ``(valid_from, key)`` pairs in
    increasing ``valid_from`` (ISO 8601, UTC unless it says otherwise): a number uses the
    last key whose ``valid_from`` is not after its second, the first key the seconds before
    it. Equal schedules compare equal; nothing shows a key; a copy is the schedule itself.
    """

    __slots__ = ("_fingerprint", "_ids", "_secrets", "starts")

    def __init__(self, entries: Sequence[tuple[int, Secret]]) -> None:
        if not entries:
            raise LayoutError("A key schedule needs at least one key.")
        self.starts: tuple[int, ...] = tuple(entry[0] for entry in entries)
        self._secrets = tuple(entry[1] for entry in entries)
        self._ids = tuple(
            hashlib.sha256(_ID_LABEL + entry[1]._value).hexdigest()[:16] for entry in entries
        )
        digest = hashlib.sha256()
        for entry in entries:
            digest.update(entry[0].to_bytes(8, "big", signed=True) + entry[1]._value)
        self._fingerprint = digest.digest()

    @classmethod
    def parse(cls, value: object, *, name: str = "the key") -> KeySchedule:
        """The schedule of ``value``: a key, or a list of ``(valid_from, key)`` pairs."""
        entries = _entries(value, name)
        del value
        if isinstance(entries, str):
            raise LayoutError(entries)
        return cls(entries)

    def index_at(self, unix_second: int) -> int:
        """Which key (0 the first) conceals the numbers of ``unix_second``."""
        return max(bisect.bisect_right(self.starts, unix_second) - 1, 0)

    def key_id(self, index: int) -> str:
        """The public fingerprint of key ``index`` (16 hex digits)."""
        return self._ids[index]

    def stream(self, index: int, material: bytes, size: int) -> bytes:
        """``size`` bytes of SHAKE-256 of key ``index``'s secret followed by ``material``."""
        return hashlib.shake_256(self._secrets[index]._value + material).digest(size)

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

    def __copy__(self) -> KeySchedule:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> KeySchedule:
        return self
