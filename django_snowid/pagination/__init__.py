"""Pages and polls by Snowflake ids: keyset pages (no ``COUNT(*)``, no ``OFFSET``), time
bounds turned into id bounds, and feeds served only up to the settled id."""

from __future__ import annotations

from .keys import CursorKey, cursor_key
from .settle import Settled, settled
from .views import SnowflakePage, SnowflakePaginationMixin, SnowflakePaginator

__all__ = [
    "CursorKey",
    "Settled",
    "SnowflakePage",
    "SnowflakePaginationMixin",
    "SnowflakePaginator",
    "cursor_key",
    "settled",
]
