"""Pages by ids in plain Django views: a ListView with "older" and "newer" links, a 400
naming a bad parameter, and the keys that cannot order pages."""

from __future__ import annotations

import re

import pytest

from django_snowid.exceptions import CursorKeyError
from django_snowid.pagination import SnowflakePaginator, cursor_key
from tests.feedapp.models import Entry, Post
from tests.pagination.feeds import make_posts
from tests.testapp.models import PlainAuto, ShardedOrder, ShopOrder

pytestmark = pytest.mark.django_db


def rendered(client, url: str) -> tuple[list[int], dict[str, str]]:
    response = client.get(url)
    assert response.status_code == 200, response.content
    html = response.content.decode()
    ids = [int(i) for i in re.findall(r'data-id="(\d+)"', html)]
    links = {
        rel: href.replace("&amp;", "&")
        for rel, href in re.findall(r'rel="(\w+)" href="([^"]+)"', html)
    }
    return ids, links


def test_a_list_view_walks_older_and_back_newer(client):
    posts = sorted((p.pk for p in make_posts(8)), reverse=True)
    seen: list[int] = []
    url = "/posts/"
    pages = []
    while url:
        ids, links = rendered(client, url)
        seen += ids
        pages.append(links)
        url = links.get("next", "")
    assert seen == posts
    assert len(pages) == 3 and "next" not in pages[-1]
    ids, _ = rendered(client, pages[-1]["prev"])  # newer than the last page's newest
    assert ids == posts[3:6]


def test_a_bad_parameter_is_a_400_naming_it(client):
    response = client.get("/posts/?max_id=12x")
    assert response.status_code == 400


def test_the_paginator_reads_a_request(rf):
    posts = sorted((p.pk for p in make_posts(5)), reverse=True)
    page = SnowflakePaginator(Post.objects.all(), 2).page_for(rf.get("/x/", {"max_id": posts[1]}))
    assert [p.pk for p in page] == posts[2:4]
    assert page.older_url == f"/x/?max_id={posts[3]}"
    assert page.newer_url == f"/x/?min_id={posts[2]}"
    assert page.settled is not None and page.settled.id > posts[0]


@pytest.mark.parametrize(
    ("model", "field", "reason"),
    [
        (ShopOrder, "number", "order number"),
        (PlainAuto, None, "not a Snowflake field"),
        (Entry, "loose", "unique or indexed"),
        (ShardedOrder, "receipt", "NOT NULL"),
    ],
)
def test_keys_that_cannot_order_pages_are_refused(model, field, reason):
    with pytest.raises(CursorKeyError, match=reason):
        cursor_key(model, field)


def test_a_unique_snowflake_column_orders_pages():
    assert cursor_key(Entry, "stamp").layout.name == "js"
    assert cursor_key(Post).name == "id"
