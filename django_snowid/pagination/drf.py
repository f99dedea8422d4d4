"""Django REST framework pagination by Snowflake ids (the class is documented in
comments: drf-spectacular would take a docstring as every subclass's description)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet
from rest_framework import exceptions
from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.settings import api_settings

from ..core.layout import Layout
from ..exceptions import PageParameterError
from ..settings_layouts import get_layout
from .keys import CursorKey, cursor_key
from .keyset import KeysetPage, read_page
from .links import PageLinks, link_header, page_links
from .params import read_parameters
from .settle import settled

__all__ = ["SETTLED_HEADER", "SnowflakeCursorPagination"]

#: The response header that says how far the feed is settled.
SETTLED_HEADER = "Settled-Id"

_PARAMETERS = (
    ("max_id", "Only rows older than this id."),
    ("since_id", "Only rows newer than this id: the newest ones first."),
    ("min_id", "Only rows newer than this id: the ones immediately after it."),
)
_TIMES = (
    ("created_after", "Only rows created at or after this instant (ISO 8601, with a zone)."),
    ("created_before", "Only rows created before this instant (ISO 8601, with a zone)."),
)


def _id_schema(layout: Layout) -> dict[str, Any]:
    return {"type": "string", "pattern": f"^[0-9]{{1,{len(str(layout.max_id))}}}$"}


# Pages by a Snowflake key (``key``: a field name, None for the pk), newest first.
# ``page_size`` rows unless ``limit`` asks for fewer, at most ``max_page_size``;
# ``settle = False`` serves rows up to the newest (no settled bound: for browsing, not
# for polling); ``clock`` (Unix nanoseconds) times the settle window.
class SnowflakeCursorPagination(BasePagination):
    page_size: int = api_settings.PAGE_SIZE or 20
    max_page_size: int = 100
    key: str | None = None
    settle: bool = True
    clock: Callable[[], int] = staticmethod(time.time_ns)

    page: KeysetPage | None = None
    links: PageLinks | None = None

    def paginate_queryset(
        self, queryset: QuerySet[Any], request: Any, view: Any = None
    ) -> list[Any]:
        key = cursor_key(queryset.model, self.key)
        try:
            asked = read_parameters(
                request.query_params,
                key.layout,
                default_limit=self.page_size,
                max_limit=self.max_page_size,
            )
        except PageParameterError as exc:
            raise exceptions.ValidationError({exc.parameter: [exc.reason]}) from None
        bound = settled(key.layout, using=queryset.db, clock=self.clock) if self.settle else None
        self.page = read_page(queryset, key, asked, bound)
        self.links = page_links(request.build_absolute_uri(), self.page.cursors)
        return self.page.rows

    def settled_id(self) -> str | None:
        page = self.page
        return None if page is None or page.settled is None else str(page.settled.id)

    def get_paginated_response(self, data: Any) -> Response:
        assert self.links is not None, "paginate_queryset() first"
        headers = {}
        header, settled_id = link_header(self.links), self.settled_id()
        if header is not None:
            headers["Link"] = header
        if settled_id is not None:
            headers[SETTLED_HEADER] = settled_id
        body = {
            "next": self.links.older,
            "previous": self.links.newer,
            "settled_id": settled_id,
            "results": data,
        }
        return Response(body, headers=headers)

    def _layout(self, view: Any) -> Layout:
        model = getattr(getattr(view, "queryset", None), "model", None)
        return get_layout(None) if model is None else self._key(model).layout

    def _key(self, model: Any) -> CursorKey:
        return cursor_key(model, self.key)

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        link = {"type": "string", "nullable": True, "format": "uri"}
        return {
            "type": "object",
            "required": ["next", "previous", "settled_id", "results"],
            "properties": {
                "next": {**link, "description": "The older page (also Link rel=next)."},
                "previous": {**link, "description": "The newer page (also Link rel=prev)."},
                "settled_id": {
                    "type": "string",
                    "nullable": True,
                    "description": "Every row below this id that will ever exist is served.",
                },
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        id_schema = _id_schema(self._layout(view))
        limit = {"type": "integer", "minimum": 1, "maximum": self.max_page_size}
        moment = {"type": "string", "format": "date-time"}
        return [
            {
                "name": "limit",
                "required": False,
                "in": "query",
                "schema": limit,
                "description": f"Rows a page, at most {self.max_page_size}.",
            },
            *[
                {
                    "name": name,
                    "required": False,
                    "in": "query",
                    "schema": id_schema,
                    "description": text,
                }
                for name, text in _PARAMETERS
            ],
            *[
                {
                    "name": name,
                    "required": False,
                    "in": "query",
                    "schema": moment,
                    "description": text,
                }
                for name, text in _TIMES
            ],
        ]
