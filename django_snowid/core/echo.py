"""What an error message quotes of a person's input: its repr, shortened, so that a pasted
megabyte does not come back in full."""

from __future__ import annotations

__all__ = ["shown"]


def shown(value: object, limit: int = 40) -> str:
    """``repr(value)``, or its first characters and the length when longer than ``limit``."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return repr(value)
    return f"{text[: limit // 2]!r}... ({len(text):,} characters)"
