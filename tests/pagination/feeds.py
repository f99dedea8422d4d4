"""What the pages-by-ids tests share: rows with ids of known times, and the reference
page computed by sorting in Python."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from django_snowid.core.layout import Layout
from django_snowid.settings_layouts import get_layout
from tests.feedapp.models import Post

#: The rows' times: an hour ago and before, far outside any settle window.
START = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=2)


def id_at(layout: Layout, seconds: float, sequence: int = 0, node: int = 3) -> int:
    """The id of ``node`` with ``sequence`` at ``START + seconds``."""
    return layout.compose(layout.tick_at(START + timedelta(seconds=seconds)), node, sequence)


def make_posts(count: int = 24) -> list[Post]:
    """``count`` posts, oldest first: two a second (one each of two workers), authors
    "ann" and "bob" in turn."""
    layout = get_layout()
    posts = [
        Post(
            id=id_at(layout, i // 2, node=3 + i % 2), author="ann" if i % 3 else "bob", body=f"#{i}"
        )
        for i in range(count)
    ]
    return Post.objects.bulk_create(posts)


@dataclass(frozen=True)
class Asked:
    """A request's parameters (``None``: not given) and its filter."""

    limit: int | None = None
    max_id: int | None = None
    since_id: int | None = None
    min_id: int | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    author: str | None = None

    def query(self) -> dict[str, str]:
        return {
            name: value.isoformat() if isinstance(value, datetime) else str(value)
            for name, value in vars(self).items()
            if value is not None
        }


def reference(posts: list[Post], asked: Asked, *, default_limit: int, layout: Layout) -> list[int]:
    """The ids of the page ``asked``, newest first, by sorting in Python (Mastodon's rules:
    ``min_id`` gives the rows immediately after it, every bound applies)."""
    ids = sorted(
        post.pk
        for post in posts
        if (asked.author is None or post.author == asked.author)
        and (asked.max_id is None or post.pk < asked.max_id)
        and (asked.since_id is None or post.pk > asked.since_id)
        and (asked.min_id is None or post.pk > asked.min_id)
        and (asked.created_after is None or post.pk >= layout.min_id_at(asked.created_after))
        and (asked.created_before is None or post.pk < layout.min_id_at(asked.created_before))
    )
    limit = asked.limit or default_limit
    if asked.min_id is not None:
        return ids[:limit][::-1]
    return ids[::-1][:limit]
