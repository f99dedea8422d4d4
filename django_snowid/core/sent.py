"""What a client sent for one of our integers (JSON, GraphQL): digits, or a safe number."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, cast

from ..exceptions import InvalidId, InvalidSentValue
from .digits import parse_digits
from .echo import shown

__all__ = [
    "MAX_BIGINT",
    "MAX_SAFE_INTEGER",
    "ORDER_NUMBER",
    "SEQUENCE_VALUE",
    "SNOWFLAKE_ID",
    "Kind",
    "parse_sent",
    "sent_digits",
    "sent_refusal",
]

#: The largest integer a JSON number carries exactly into JavaScript (Number.MAX_SAFE_INTEGER).
MAX_SAFE_INTEGER: Final = 2**53 - 1
#: The largest BIGINT: no id, order number or sequence value is larger.
MAX_BIGINT: Final = 2**63 - 1


@dataclass(frozen=True)
class Kind:
    """What a value is called ("an id"), and its refusals by code (``{value}`` templates)."""

    what: str
    messages: Mapping[str, str]


SNOWFLAKE_ID: Final = Kind(
    "an id",
    {
        "invalid": "{value} is not a Snowflake id: send the id as a string of digits.",
        "float": "{value} is not a Snowflake id: ids are integers; send them as strings.",
        "unsafe_number": (
            "{value} was sent as a JSON number above 2**53 - 1: JavaScript clients have "
            "already changed its last digits. Send ids as strings."
        ),
    },
)
ORDER_NUMBER: Final = Kind(
    "an order number",
    {
        "invalid": "{value} is not an order number: send it as a string of digits.",
        "float": (
            "{value} is not an order number: order numbers are integers; send them as strings."
        ),
        "unsafe_number": (
            "{value} was sent as a JSON number above 2**53 - 1: JavaScript clients have "
            "already changed its last digits (and maybe its shard). Send order numbers as "
            "strings."
        ),
    },
)
SEQUENCE_VALUE: Final = Kind(
    "a sequence value",
    {
        "invalid": "{value} is not a sequence value: send it as a string of digits.",
        "float": (
            "{value} is not a sequence value: sequence values are integers; send them as strings."
        ),
        "unsafe_number": (
            "{value} was sent as a JSON number above 2**53 - 1: JavaScript clients have "
            "already changed its last digits. Send sequence values as strings."
        ),
    },
)


def sent_refusal(data: object, *, allow_unsafe: bool = False) -> str | None:
    """Why ``data`` is refused ("float", "invalid", "unsafe_number"), or ``None`` for a
    string (for the digits parser) and an integer JavaScript holds (any, ``allow_unsafe``)."""
    if isinstance(data, float):
        return "float"
    if isinstance(data, bool) or not isinstance(data, int | str):
        return "invalid"
    if isinstance(data, int) and data > MAX_SAFE_INTEGER and not allow_unsafe:
        return "unsafe_number"
    return None


def parse_sent(data: object, kind: Kind, *, allow_unsafe: bool = False) -> int:
    """``data`` as an int in ``0..2**63 - 1``, or :class:`InvalidSentValue` saying why not."""
    code = sent_refusal(data, allow_unsafe=allow_unsafe)
    if code is not None:
        raise InvalidSentValue(kind.messages[code].format(value=shown(data)), code)
    value = sent_digits(data, kind.what) if isinstance(data, str) else cast(int, data)
    if not 0 <= value <= MAX_BIGINT:
        raise InvalidSentValue(
            f"{value} is out of range: {kind.what} is an integer from 0 to 2**63 - 1.",
            "out_of_range",
        )
    return value


def sent_digits(text: str, what: str) -> int:
    """``text`` read by the one parser of typed numbers, or :class:`InvalidSentValue`."""
    try:
        return parse_digits(text, what=what)
    except InvalidId as exc:
        code = "too_long" if text.isascii() and text.isdigit() else "invalid"
        raise InvalidSentValue(str(exc), code) from None
