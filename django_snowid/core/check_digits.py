"""Check digits of decimal order numbers: Luhn and Damm.

Pure Python: no Django, no I/O. A check digit is appended to a number (``n * 10 + d``);
a number is valid when its last digit is the check digit of the digits before it.

- Luhn catches every single wrong digit and most adjacent transpositions (not 09/90).
- Damm (the order-10 quasigroup of H. Michael Damm) catches every single wrong digit and
  every adjacent transposition.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

__all__ = ["CHECK_DIGITS", "damm_digit", "has_valid_check_digit", "luhn_digit"]

_DAMM: Final = (
    (0, 3, 1, 7, 5, 9, 8, 6, 4, 2),
    (7, 0, 9, 2, 1, 5, 4, 8, 6, 3),
    (4, 2, 0, 6, 8, 7, 1, 3, 5, 9),
    (1, 7, 5, 0, 9, 8, 3, 4, 2, 6),
    (6, 1, 2, 3, 0, 4, 5, 9, 7, 8),
    (3, 6, 7, 4, 2, 0, 9, 5, 8, 1),
    (5, 8, 6, 9, 7, 2, 0, 1, 3, 4),
    (8, 9, 4, 5, 3, 6, 2, 0, 1, 7),
    (9, 4, 3, 8, 6, 1, 7, 2, 0, 5),
    (2, 5, 8, 1, 4, 3, 6, 7, 9, 0),
)
# A digit doubled as Luhn does: 2d, less 9 above 9.
_DOUBLED: Final = (0, 2, 4, 6, 8, 1, 3, 5, 7, 9)


def luhn_digit(number: int) -> int:
    """The Luhn check digit to append to ``number`` (>= 0)."""
    total = 0
    double = True  # the last digit of the payload is doubled: the check digit follows it
    while number:
        number, digit = divmod(number, 10)
        total += _DOUBLED[digit] if double else digit
        double = not double
    return -total % 10


def damm_digit(number: int) -> int:
    """The Damm check digit to append to ``number`` (>= 0)."""
    interim = 0
    for char in str(number):
        interim = _DAMM[interim][ord(char) - 48]
    return interim


#: The check-digit schemes by name (``OrderNumberField(check_digit=...)``).
CHECK_DIGITS: Final[dict[str, Callable[[int], int]]] = {"luhn": luhn_digit, "damm": damm_digit}


def has_valid_check_digit(scheme: str, number: int) -> bool:
    """Whether ``number``'s last digit is the ``scheme`` check digit of the rest."""
    body, digit = divmod(number, 10)
    return CHECK_DIGITS[scheme](body) == digit
