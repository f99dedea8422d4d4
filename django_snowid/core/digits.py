"""The one parser of digit strings a person typed or pasted: ids, order numbers, searches.

Pure Python: no Django, no I/O. Every reader of a typed number goes through
:func:`parse_digits`, so that they all refuse the same things with the same words:

- only the ASCII digits 0-9 (``str.isdigit()`` accepts other scripts' digits, and
  ``str.strip()`` would accept a no-break space or an ideographic space: a value with
  those around it was not copied from our output, so it is refused, not guessed);
- the length is bounded *before* ``int()``, which refuses more than 4,300 digits with
  its own ``ValueError`` and spends quadratic time below that.
"""

from __future__ import annotations

from ..exceptions import InvalidId
from .echo import shown

__all__ = ["MAX_DIGITS", "parse_digits"]

#: 2**63 - 1 has 19 digits: no id or order number of ours is longer.
MAX_DIGITS = 19
_DIGITS = frozenset("0123456789")


def parse_digits(text: object, *, what: str = "an id") -> int:
    """``text`` (a ``str`` of 1 to 19 ASCII digits) as an ``int``, or :class:`InvalidId`.

    ``what`` names the thing expected in the message ("an id", "an order number").
    The range of values is the caller's business (a layout's ids, order numbers).
    """
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
