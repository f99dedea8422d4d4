"""Reading pasted ids and order numbers for people (the admin's decode page and panels,
``snowid_decode``): which reading, why, every part, and a bit diagram."""

from .detect import decode_tokens, reading_choices
from .kinds import OrderReading, Reading, SnowflakeReading, snowflake_bits
from .rows import DecodedRow, Holder, Segment, parse_token, time_texts

__all__ = [
    "DecodedRow",
    "Holder",
    "OrderReading",
    "Reading",
    "Segment",
    "SnowflakeReading",
    "decode_tokens",
    "parse_token",
    "reading_choices",
    "snowflake_bits",
    "time_texts",
]
