"""The URLs of the pages around a page (the request's, its cursor replaced) and the
``Link`` header naming them."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..core.keyset import Cursors
from .params import CURSOR_PARAMETERS

__all__ = ["PageLinks", "link_header", "page_links"]


class PageLinks:
    """``older`` (``rel="next"``) and ``newer`` (``rel="prev"``) URLs, ``None`` when no
    such page exists."""

    def __init__(self, older: str | None, newer: str | None) -> None:
        self.older = older
        self.newer = newer


def _with_cursor(url: str, name: str, value: int) -> str:
    scheme, netloc, path, query, fragment = urlsplit(url)
    kept = [
        (k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in CURSOR_PARAMETERS
    ]
    kept.append((name, str(value)))
    return urlunsplit((scheme, netloc, path, urlencode(kept), fragment))


def page_links(url: str, cursors: Cursors) -> PageLinks:
    """The links of the pages around the one ``url`` asked for."""
    return PageLinks(
        older=None if cursors.older is None else _with_cursor(url, "max_id", cursors.older),
        newer=None if cursors.newer is None else _with_cursor(url, "min_id", cursors.newer),
    )


def link_header(links: PageLinks) -> str | None:
    """``<older>; rel="next", <newer>; rel="prev"`` (RFC 8288), ``None`` without links."""
    parts = [
        f'<{url}>; rel="{rel}"'
        for url, rel in ((links.older, "next"), (links.newer, "prev"))
        if url is not None
    ]
    return ", ".join(parts) or None
