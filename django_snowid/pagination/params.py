"""The query parameters of a page by ids, read from a request's query string: each one
checked, and refused with :class:`PageParameterError` naming it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..core.digits import parse_digits
from ..core.echo import shown
from ..core.layout import Layout
from ..exceptions import InvalidId, PageParameterError

__all__ = ["CURSOR_PARAMETERS", "TIME_PARAMETERS", "PageParameters", "read_parameters"]

#: The parameters that place a page (one page's links replace them).
CURSOR_PARAMETERS = ("max_id", "since_id", "min_id")
#: The parameters that bound the rows by creation time (links keep them).
TIME_PARAMETERS = ("created_after", "created_before")
_LONGEST_TIME = 64  # characters: an ISO 8601 instant with microseconds and offset has 32


@dataclass(frozen=True)
class PageParameters:
    """What a request asks for; ``None`` where a parameter was not given."""

    limit: int
    max_id: int | None = None
    since_id: int | None = None
    min_id: int | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None


def _single(query: Any, name: str) -> str | None:
    """The one value of ``name`` in ``query`` (a ``QueryDict`` or a mapping); an empty
    value is no value."""
    values = query.getlist(name) if hasattr(query, "getlist") else [query.get(name)]
    values = [value for value in values if value not in (None, "")]
    if len(values) > 1:
        raise PageParameterError(name, f"given {len(values)} times; give it once.")
    return values[0] if values else None


def _id(query: Any, name: str, layout: Layout) -> int | None:
    text = _single(query, name)
    if text is None:
        return None
    try:
        return layout.check_id(parse_digits(text, what="an id"))
    except InvalidId as exc:
        raise PageParameterError(name, str(exc)) from None


def _limit(query: Any, default: int, largest: int) -> int:
    text = _single(query, "limit")
    if text is None:
        return default
    try:
        value = parse_digits(text, what="a number of rows")
    except InvalidId as exc:
        raise PageParameterError("limit", str(exc)) from None
    if value < 1:
        raise PageParameterError("limit", "0 rows: ask for at least 1.")
    return min(value, largest)


def _moment(query: Any, name: str) -> datetime | None:
    text = _single(query, name)
    if text is None:
        return None
    refusal = (
        f"{shown(text)} is not an ISO 8601 instant with a zone, such as "
        "2025-01-31T12:00:00Z or 2025-01-31T13:00:00+01:00."
    )
    if len(text) > _LONGEST_TIME:
        raise PageParameterError(name, refusal)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise PageParameterError(name, refusal) from None
    if moment.tzinfo is None:
        raise PageParameterError(name, f"{refusal} It has no zone: add Z for UTC.")
    return moment


def read_parameters(
    query: Mapping[str, Any], layout: Layout, *, default_limit: int, max_limit: int
) -> PageParameters:
    """The page ``query`` asks for, its ids checked against ``layout``; a ``limit`` above
    ``max_limit`` is lowered to it."""
    return PageParameters(
        limit=_limit(query, default_limit, max_limit),
        max_id=_id(query, "max_id", layout),
        since_id=_id(query, "since_id", layout),
        min_id=_id(query, "min_id", layout),
        created_after=_moment(query, "created_after"),
        created_before=_moment(query, "created_before"),
    )
