"""Keyset pages over a unique, time-ordered integer key: which window of keys a request
asks for, in which order the database reads it, and the cursors of the pages around it.

The parameters are Mastodon's: ``max_id`` (older than), ``since_id`` (newer than, the
newest rows first) and ``min_id`` (newer than, the rows immediately after it). Every
bound given applies; a response is always newest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PageRequest", "Window", "page_cursors", "window_of"]


@dataclass(frozen=True)
class PageRequest:
    """A page asked for: ``limit`` rows, and the cursors given (``None``: not given).

    ``settled`` is the exclusive upper bound of the keys every reader may be shown (no
    transaction still running can commit a smaller one); ``None``: no such bound.
    """

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


def _tightest(values: Sequence[int | None], pick: type[min] | type[max]) -> int | None:
    given = [value for value in values if value is not None]
    return pick(given) if given else None


def window_of(request: PageRequest) -> Window:
    """The keys ``request`` selects and the direction to read them in."""
    return Window(
        low=_tightest((request.since_id, request.min_id), max),
        high=_tightest((request.max_id, request.settled), min),
        ascending=request.min_id is not None,
    )


@dataclass(frozen=True)
class Cursors:
    """The ``max_id`` of the older page and the ``min_id`` of the newer page (``None``:
    no such page)."""

    older: int | None
    newer: int | None


def page_cursors(
    request: PageRequest, keys: Sequence[int], *, more_beyond: bool
) -> Cursors:
    """The cursors around a page whose keys, newest first, are ``keys``.

    ``more_beyond``: rows lie past the page in the direction it was read (older ones for
    a descending read, newer ones for an ascending read). An empty page that reaches up to
    the settled bound still has a newer page: polling it brings what settles next.
    """
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
