"""The scalars both GraphQL integrations declare, and the fields of ours each types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from django.db import models

from ..core.digits import parse_digits
from ..core.echo import shown
from ..core.sent import ORDER_NUMBER, SEQUENCE_VALUE, SNOWFLAKE_ID, Kind, parse_sent
from ..fields import OrderNumberField, SnowflakeAutoField, SnowflakeField
from ..sequences.fields import SequenceField

__all__ = ["FIELD_SCALARS", "ORDER_NUMBER_SCALAR", "SEQUENCE_VALUE_SCALAR", "SNOWFLAKE_ID_SCALAR"]

_INPUT = (
    " Sent as that string, or as an integer up to 2**53 - 1 (a larger JSON number has "
    "already lost digits in JavaScript, and is refused)."
)


@dataclass(frozen=True)
class Scalar:
    """A scalar: out, a string of digits; in, digits or a safe integer (``kind`` refuses)."""

    name: str
    description: str
    kind: Kind

    def parse_value(self, value: object) -> int:
        return parse_sent(value, self.kind)

    def serialize(self, value: object) -> str:
        if type(value) is int:
            return str(value)
        if isinstance(value, str):
            return str(parse_digits(value, what=self.kind.what))
        raise TypeError(f"{self.name} cannot represent {shown(value)}: expected an integer.")


SNOWFLAKE_ID_SCALAR: Final = Scalar(
    "SnowflakeID",
    "A Snowflake id, as a string of 1 to 19 digits (a JavaScript number cannot hold it)." + _INPUT,
    SNOWFLAKE_ID,
)
ORDER_NUMBER_SCALAR: Final = Scalar(
    "OrderNumber",
    "An order number, as a string of digits (a JavaScript number cannot hold it)." + _INPUT,
    ORDER_NUMBER,
)
SEQUENCE_VALUE_SCALAR: Final = Scalar(
    "SequenceValue",
    "A value of a named sequence, a 64-bit integer, as a string of digits." + _INPUT,
    SEQUENCE_VALUE,
)

FIELD_SCALARS: Final[tuple[tuple[type[models.Field], Scalar], ...]] = (
    (SnowflakeAutoField, SNOWFLAKE_ID_SCALAR),
    (SnowflakeField, SNOWFLAKE_ID_SCALAR),
    (OrderNumberField, ORDER_NUMBER_SCALAR),
    (SequenceField, SEQUENCE_VALUE_SCALAR),
)
