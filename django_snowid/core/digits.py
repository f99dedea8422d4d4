"""The one parser of digit strings a person typed or pasted: only ASCII digits 0-9, the
length bounded before ``int()``."""

from __future__ import annotations

from ..exceptions import InvalidId
from .echo import shown

__all__ = ["MAX_DIGITS", "parse_digits"]

#: 2**63 - 1 has 19 digits: no id or order number of ours is longer.
MAX_DIGITS = 19
_DIGITS = frozenset("0123456789")


def parse_digits(text: object, *, what: str = "an id") -> int:
    """``text`` (a ``str`` of 1 to 19 ASCII digits) as an ``int``, or :class:`InvalidId`
    naming ``what`` was expected."""
    if not isinstance(text, str):
        raise InvalidId(f"{shown(text)} is not {what}: expected a string of digits 0-9.")
    if not text or not _DIGITS.issuperset(text):
        raise InvalidId(f"{shown(text)} is not {what}: only the digits 0-9, nothing else.")
    if len(text) > MAX_DIGITS:
        raise InvalidId(
            f"{shown(text)} is not {what}: {len(text):,} digits, at most {MAX_DIGITS} "
            "(2**63 - 1 has 19)."
        )
    return int(text)
