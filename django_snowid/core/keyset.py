"""Keyset pages over a unique ordered integer key, by Mastodon's ``max_id``,
``since_id`` and ``min_id``: the window of keys, its direction, the cursors around it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PageRequest", "Window", "page_cursors", "window_of"]


@dataclass(frozen=True)
class PageRequest:
    """``limit`` rows, the cursors given (``None``: not given), and ``settled``: the
    exclusive upper bound of the keys that may be shown (``None``: none)."""

    limit: int
    max_id: int | None = None
    since_id: int | None = None
    min_id: int | None = None
    settled: int | None = None


@dataclass(frozen=True)
class Window:
    """Keys ``low < key < high`` (``None``: unbounded), read ascending from ``low`` when
    ``ascending`` (a ``min_id`` page), else descending from ``high``."""

    low: int | None
    high: int | None
    ascending: bool


def _given(values: Sequence[int | None]) -> list[int]:
    return [value for value in values if value is not None]


def window_of(request: PageRequest) -> Window:
    """The keys ``request`` selects and the direction to read them in."""
    lows = _given((request.since_id, request.min_id))
    highs = _given((request.max_id, request.settled))
    return Window(
        low=max(lows) if lows else None,
        high=min(highs) if highs else None,
        ascending=request.min_id is not None,
    )


@dataclass(frozen=True)
class Cursors:
    """The ``max_id`` of the older page and the ``min_id`` of the newer page (``None``:
    no such page)."""

    older: int | None
    newer: int | None


def page_cursors(request: PageRequest, keys: Sequence[int], *, more_beyond: bool) -> Cursors:
    """The cursors around a page whose keys, newest first, are ``keys``; ``more_beyond``:
    rows lie past it in the direction it was read. An empty page up to the settled bound
    still has a newer page: polling it brings what settles next."""
    window = window_of(request)
    if keys:
        older_exists = more_beyond if not window.ascending else True
        return Cursors(older=keys[-1] if older_exists else None, newer=keys[0])
    if window.low is not None:
        return Cursors(older=None, newer=window.low)
    reaches_top = request.max_id is None or (
        request.settled is not None and request.max_id >= request.settled
    )
    if reaches_top and request.settled is not None:
        return Cursors(older=None, newer=request.settled - 1)
    return Cursors(older=None, newer=None)
