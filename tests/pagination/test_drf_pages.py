"""SnowflakeCursorPagination: every parameter and combination against a reference made by
sorting in Python, Link headers followed to the end, and a 400 naming each bad parameter."""

from __future__ import annotations

import itertools
import re
from datetime import timedelta

import pytest
from django.test import override_settings

from django_snowid.drf import SnowflakeCursorPagination
from django_snowid.settings_layouts import get_layout
from tests.feedapp.models import Entry, Post
from tests.pagination.feeds import START, Asked, id_at, make_posts, reference

pytestmark = pytest.mark.django_db

URL = "/feed/posts/"


def page_ids(client, url: str, query: dict[str, str] | None = None) -> list[int]:
    response = client.get(url, query or {})
    assert response.status_code == 200, response.content
    return [int(row["id"]) for row in response.json()["results"]]


def links(response) -> dict[str, str]:
    """The Link header's URLs by rel."""
    header = response.headers.get("Link", "")
    return {rel: url for url, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', header)}


def test_every_combination_matches_the_reference(client):
    """Every combination of the parameters against the reference sorted in Python.

    Slow: 1,728 combinations, each a request through the view and its paginator."""
    posts = make_posts()
    layout = get_layout()
    ids = sorted(p.pk for p in posts)
    between = ids[9] + 1  # an id no row has, between two rows
    cursors = [None, ids[3], ids[15], between]
    times = [None, START + timedelta(seconds=4), START + timedelta(seconds=8.5)]
    checked = 0
    for limit, max_id, since_id, min_id, after, before, author in itertools.product(
        [None, 1, 4], cursors, cursors[:3], cursors, times, times[::2], [None, "bob"]
    ):
        asked = Asked(limit, max_id, since_id, min_id, after, before, author)
        expected = reference(posts, asked, default_limit=5, layout=layout)
        assert page_ids(client, URL, asked.query()) == expected, asked
        checked += bool(expected)
    assert checked > 300  # most combinations select rows


def follow(client, url: str, rel: str) -> tuple[list[int], int]:
    """Every id on the pages from ``url`` on, following ``rel`` until it ends or brings
    nothing, and how many pages were read."""
    seen: list[int] = []
    pages = 0
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.content
        body = response.json()
        pages += 1
        rows = [int(row["id"]) for row in body["results"]]
        if not rows:
            break
        seen += rows
        assert body["next" if rel == "next" else "previous"] == links(response).get(rel)
        url = links(response).get(rel, "")
    return seen, pages


@pytest.mark.parametrize("limit", [1, 3, 5, 24, 50])
def test_following_next_links_gives_every_row_once(client, limit):
    posts = make_posts()
    seen, pages = follow(client, f"{URL}?limit={limit}", "next")
    assert seen == sorted((p.pk for p in posts), reverse=True)
    assert pages == -(-len(posts) // limit)  # no empty page at the end


@pytest.mark.parametrize("limit", [1, 4, 50])
def test_following_prev_links_from_the_oldest_gives_every_newer_row_once(client, limit):
    posts = make_posts()
    oldest = min(p.pk for p in posts)
    seen, _ = follow(client, f"{URL}?limit={limit}&min_id={oldest}", "prev")
    assert sorted(seen) == sorted(p.pk for p in posts if p.pk > oldest)
    assert len(seen) == len(set(seen))


def test_links_keep_filters_and_time_bounds(client):
    make_posts()
    after = (START + timedelta(seconds=2)).isoformat()
    response = client.get(URL, {"author": "bob", "limit": 2, "created_after": after})
    older = links(response)["next"]
    assert "author=bob" in older and "limit=2" in older and "created_after=" in older
    assert "max_id=" in older and "min_id" not in older
    seen, _ = follow(client, response.json()["next"], "next")
    bobs = sorted((p.pk for p in Post.objects.filter(author="bob")), reverse=True)
    first = page_ids(client, URL, {"author": "bob", "limit": "2", "created_after": after})
    layout = get_layout()
    assert first + seen == [i for i in bobs if i >= layout.min_id_at(START + timedelta(seconds=2))]


def test_ids_leave_as_strings_with_the_settled_id(client):
    posts = make_posts(3)
    response = client.get(URL)
    body = response.json()
    assert [row["id"] for row in body["results"]] == [str(p.pk) for p in reversed(posts)]
    assert isinstance(body["settled_id"], str)
    assert response.headers["Settled-Id"] == body["settled_id"]
    assert int(body["settled_id"]) > max(p.pk for p in posts)


def test_rows_above_the_settled_id_wait(client, settings):
    """A row drawn now is served once the settle window has passed it, not before."""
    settings.SNOWID_FEED_SETTLE_WINDOW_S = 3600 * 24
    settings.SNOWID_FEED_SETTLE_MARGIN_MS = 3600 * 24 * 1000
    make_posts(2)
    fresh = Post.objects.create(body="fresh")
    response = client.get(URL)
    body = response.json()
    assert body["results"] == []  # everything is younger than a day
    assert int(body["settled_id"]) < fresh.pk
    # The poll starts just below the settled id: nothing there is left to commit.
    assert f"min_id={int(body['settled_id']) - 1}" in response.headers["Link"]
    settings.SNOWID_FEED_SETTLE_WINDOW_S = 0
    settings.SNOWID_FEED_SETTLE_MARGIN_MS = 0
    browse = page_ids(client, "/feed/browse/")
    assert browse[0] == fresh.pk  # settle = False serves it at once


def test_an_empty_poll_links_to_itself(client):
    posts = make_posts(4)
    newest = max(p.pk for p in posts)
    response = client.get(URL, {"min_id": str(newest)})
    assert response.json()["results"] == []
    assert links(response) == {"prev": f"http://testserver{URL}?min_id={newest}"}


def test_a_non_pk_key_with_its_own_layout(client):
    layout = get_layout("js")
    entries = Entry.objects.bulk_create(
        Entry(stamp=id_at(layout, i, node=1), loose=i) for i in range(7)
    )
    stamps = sorted((e.stamp for e in entries), reverse=True)
    assert page_ids_of(client, "/feed/entries/", "stamp") == stamps[:5]
    assert page_ids_of(client, "/feed/entries/", "stamp", {"max_id": str(stamps[4])}) == stamps[5:]
    response = client.get("/feed/entries/", {"max_id": str(2**62)})  # a classic-sized id
    assert response.status_code == 400
    assert "max_id" in response.json()


def page_ids_of(client, url: str, field: str, query: dict[str, str] | None = None) -> list[int]:
    response = client.get(url, query or {})
    assert response.status_code == 200, response.content
    return [int(row[field]) for row in response.json()["results"]]


GARBAGE = {
    "letters": "abc",
    "5,000 digits": "7" * 5000,
    "negative": "-5",
    "a float": "1.5",
    "an exponent": "1e18",
    "spaces": " 12",
    "past 63 bits": str(2**63),
    "unicode digits": "١٢٣",
}


@pytest.mark.parametrize("parameter", ["max_id", "since_id", "min_id", "limit"])
@pytest.mark.parametrize("value", GARBAGE.values(), ids=GARBAGE.keys())
def test_garbage_ids_are_400s_naming_the_parameter(client, parameter, value):
    if parameter == "limit" and value == str(2**63):
        value = "0"  # too many rows is lowered to the largest page; none is refused
    response = client.get(URL, {parameter: value})
    assert response.status_code == 400, response.content
    assert list(response.json()) == [parameter]
    assert len(response.content) < 500  # the input is not echoed back whole


@pytest.mark.parametrize("parameter", ["created_after", "created_before"])
@pytest.mark.parametrize(
    "value", ["yesterday", "2025-13-01T00:00:00Z", "2025-01-01T00:00:00", "2025-01-01", "9" * 5000]
)
def test_bad_times_are_400s_naming_the_parameter(client, parameter, value):
    response = client.get(URL, {parameter: value})
    assert response.status_code == 400, response.content
    assert list(response.json()) == [parameter]


def test_a_parameter_given_twice_is_a_400(client):
    response = client.get(f"{URL}?max_id=5&max_id=6")
    assert response.status_code == 400
    assert "given 2 times" in response.json()["max_id"][0]


def test_a_large_limit_is_lowered_to_the_largest_page(client):
    posts = make_posts(60)
    assert len(page_ids(client, URL, {"limit": "1000"})) == 50 < len(posts)


def test_times_outside_the_layout_are_bounds_not_errors(client):
    posts = make_posts(3)
    ids = sorted((p.pk for p in posts), reverse=True)
    assert page_ids(client, URL, {"created_after": "1900-01-01T00:00:00Z"}) == ids
    assert page_ids(client, URL, {"created_before": "1900-01-01T00:00:00Z"}) == []
    assert page_ids(client, URL, {"created_before": "9999-12-31T23:59:59+00:00"}) == ids


def test_the_schema_describes_every_parameter():
    from drf_spectacular.generators import SchemaGenerator

    from tests.feedapp import api

    spectacular = {"DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema"}
    with override_settings(REST_FRAMEWORK=spectacular):
        schema = SchemaGenerator(patterns=api.urlpatterns).get_schema(request=None, public=True)
    operation = schema["paths"]["/posts/"]["get"]
    parameters = {p["name"]: p["schema"] for p in operation["parameters"]}
    assert {"limit", "max_id", "since_id", "min_id", "created_after", "created_before"} <= set(
        parameters
    )
    assert parameters["max_id"] == {"type": "string", "pattern": "^[0-9]{1,19}$"}
    assert parameters["created_after"]["format"] == "date-time"
    entries = schema["paths"]["/entries/"]["get"]["parameters"]
    assert {p["name"]: p["schema"] for p in entries}["min_id"]["pattern"] == "^[0-9]{1,16}$"
    body = schema["components"]["schemas"]["PaginatedPostList"]["properties"]
    assert set(body) == {"next", "previous", "settled_id", "results"}


def test_the_issue_import_path_is_ours():
    from django_snowid.pagination.drf import SnowflakeCursorPagination as Ours

    assert SnowflakeCursorPagination is Ours
