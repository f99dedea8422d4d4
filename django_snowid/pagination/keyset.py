"""One page of a queryset by its Snowflake key, read through the key's index."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from ..core.keyset import Cursors, PageRequest, page_cursors, window_of
from .keys import CursorKey
from .params import PageParameters
from .settle import Settled

__all__ = ["KeysetPage", "read_page"]


@dataclass(frozen=True)
class KeysetPage:
    """``rows`` newest first, the cursors of the pages around them, and how far the rows
    were settled (``None``: not bounded by a settled id)."""

    rows: list[Any]
    cursors: Cursors
    settled: Settled | None


def _bounded(queryset: QuerySet[Any], key: CursorKey, asked: PageParameters) -> QuerySet[Any]:
    """``queryset`` within the creation times asked (the key's ``created_*`` lookups); a
    time past the layout's last tick bounds nothing above and selects nothing below (its
    id, 2**63, fits no BIGINT)."""
    end = key.layout.exhausted_at
    after, before = asked.created_after, asked.created_before
    if after is not None and after >= end:
        return queryset.none()
    if after is not None:
        queryset = queryset.filter(**{f"{key.name}__created_after": after})
    if before is not None and before < end:
        queryset = queryset.filter(**{f"{key.name}__created_before": before})
    return queryset


def read_page(
    queryset: QuerySet[Any], key: CursorKey, asked: PageParameters, settled: Settled | None
) -> KeysetPage:
    """The page ``asked`` of ``queryset`` ordered by ``key``, below ``settled``."""
    request = PageRequest(
        limit=asked.limit,
        max_id=asked.max_id,
        since_id=asked.since_id,
        min_id=asked.min_id,
        settled=None if settled is None else settled.id,
    )
    window = window_of(request)
    queryset = _bounded(queryset, key, asked)
    if window.low is not None:
        queryset = queryset.filter(**{f"{key.name}__gt": window.low})
    if window.high is not None:
        queryset = queryset.filter(**{f"{key.name}__lt": window.high})
    order = key.name if window.ascending else f"-{key.name}"
    rows = list(queryset.order_by(order)[: asked.limit + 1])
    more_beyond = len(rows) > asked.limit
    rows = rows[: asked.limit]
    if window.ascending:
        rows.reverse()
    keys = [getattr(row, key.name) for row in rows]
    return KeysetPage(rows, page_cursors(request, keys, more_beyond=more_beyond), settled)
