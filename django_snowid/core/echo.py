"""Text for people: what an error message quotes of their input (shortened, so that a pasted
megabyte does not come back in full), and the plain tables the commands print."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["shown", "table"]


def shown(value: object, limit: int = 40) -> str:
    """``repr(value)``, or its first characters and the length when longer than ``limit``."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return repr(value)
    return f"{text[: limit // 2]!r}... ({len(text):,} characters)"


def table(rows: Iterable[Sequence[object]]) -> list[str]:
    """``rows`` (the header first) as lines of left-aligned columns two spaces apart, with no
    trailing spaces."""
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))] if cells else []
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in cells
    ]
