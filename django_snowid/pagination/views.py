"""Pages by Snowflake ids for plain Django views and ``ListView``, with "older" and
"newer" links; a bad parameter is a 400 (``BadRequest``) naming it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import BadRequest
from django.db.models import QuerySet
from django.http import HttpRequest

from ..exceptions import PageParameterError
from .keys import cursor_key
from .keyset import read_page
from .links import page_links
from .params import read_parameters
from .settle import Settled, settled

__all__ = ["SnowflakePage", "SnowflakePaginationMixin", "SnowflakePaginator"]


@dataclass(frozen=True)
class SnowflakePage:
    """One page for a template: ``object_list`` newest first, the URLs of the ``older``
    and ``newer`` pages (relative, the request's other parameters kept; ``None``: none),
    and how far the rows were settled."""

    object_list: list[Any]
    older_url: str | None
    newer_url: str | None
    settled: Settled | None

    @property
    def has_older(self) -> bool:
        return self.older_url is not None

    @property
    def has_newer(self) -> bool:
        return self.newer_url is not None

    def __iter__(self) -> Iterator[Any]:
        return iter(self.object_list)

    def __len__(self) -> int:
        return len(self.object_list)


class SnowflakePaginator:
    """Pages of ``queryset`` by its Snowflake ``key`` (``None``: the pk), ``per_page`` rows
    unless ``limit`` asks for fewer (at most ``max_per_page``); ``settle=False`` serves
    rows up to the newest instead of the settled id."""

    def __init__(
        self,
        queryset: QuerySet[Any],
        per_page: int = 20,
        *,
        key: str | None = None,
        max_per_page: int = 100,
        settle: bool = True,
    ) -> None:
        self.queryset = queryset
        self.per_page = per_page
        self.max_per_page = max_per_page
        self.key = cursor_key(queryset.model, key)
        self.settle = settle

    def page_for(self, request: HttpRequest) -> SnowflakePage:
        """The page ``request``'s query string asks for; ``BadRequest`` naming a bad one."""
        try:
            asked = read_parameters(
                request.GET,
                self.key.layout,
                default_limit=self.per_page,
                max_limit=self.max_per_page,
            )
        except PageParameterError as exc:
            raise BadRequest(str(exc)) from None
        bound = settled(self.key.layout, using=self.queryset.db) if self.settle else None
        page = read_page(self.queryset, self.key, asked, bound)
        links = page_links(request.get_full_path(), page.cursors)
        return SnowflakePage(page.rows, links.older, links.newer, page.settled)


# For a ListView: ``page_obj`` is a SnowflakePage (``paginate_by`` rows a page, default 20;
# ``paginate_key``: the Snowflake field, None for the pk).
class SnowflakePaginationMixin:
    paginate_by: int | None = 20
    paginate_key: str | None = None
    request: HttpRequest

    def paginate_queryset(
        self, queryset: QuerySet[Any], page_size: int
    ) -> tuple[SnowflakePaginator, SnowflakePage, list[Any], bool]:
        paginator = SnowflakePaginator(queryset, page_size, key=self.paginate_key)
        page = paginator.page_for(self.request)
        return paginator, page, page.object_list, page.has_older or page.has_newer
