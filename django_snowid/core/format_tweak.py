"""What keys a concealed format's cipher besides the key: a fixed, versioned byte encoding
of the format, never its description for people (whose wording may change)."""

from __future__ import annotations

from typing import Final

__all__ = ["TWEAK_VERSION", "tweak"]

TWEAK_VERSION: Final = 1


def tweak(
    *,
    packing: str,
    sequence_bits: int,
    shard_bits: int,
    sequence_digits: int,
    shard_digits: int,
    zone: str,
    check_digit: str | None,
    version: int = TWEAK_VERSION,
) -> bytes:
    """The tweak of a concealed format in encoding ``version``. Version 1: the UTF-8 text
    the first releases keyed concealed numbers with, frozen byte for byte (never change)."""
    if version != 1:
        raise ValueError(f"unknown tweak encoding version {version!r}; known: 1")
    if packing == "binary":
        text = (
            f"binary: yyMMddHHmmss ({zone}) << {sequence_bits + shard_bits} | "
            f"concealed sequence {sequence_bits} bits | shard {shard_bits} bits"
        )
    else:
        check = f" + {check_digit} check digit" if check_digit else ""
        text = (
            f"decimal: yyMMddHHmmss ({zone}) + {sequence_digits} concealed sequence digits + "
            f"{shard_digits} shard digits{check}"
        )
    return text.encode()
