"""The readings of pasted ids, under their former module name (see :mod:`.readings`)."""

from .readings import (
    DecodedRow,
    Holder,
    Segment,
    decode_tokens,
    parse_token,
    reading_choices,
    snowflake_bits,
    time_texts,
)

__all__ = [
    "DecodedRow",
    "Holder",
    "Segment",
    "decode_tokens",
    "parse_token",
    "reading_choices",
    "snowflake_bits",
    "time_texts",
]
