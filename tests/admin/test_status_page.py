"""The admin's read-only status page of sequences, order-number streams and leases."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest
from django.contrib.auth.models import User
from django.test import modify_settings
from django.urls import reverse

from django_snowid.sequences import next_values
from tests.support import page_permissions
from tests.testapp.models import ShopOrder

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.redis
def test_staff_see_sequences_streams_and_leases(client, settings):
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    settings.SNOWID_ORDER_BACKEND = "database"
    settings.SNOWID_WORKER_ID_SOURCE = "database"
    next_values("coupon", 3)
    order = ShopOrder.objects.create(user_id=7)
    from django_snowid.ids.issuer import get_generator
    from django_snowid.workers.lease import release_all

    node = get_generator(None).node  # leases a worker id
    try:
        response = _status_page(client)
    finally:
        release_all()
    (row,) = [r for r in response.context["sequences"] if r["name"] == "coupon"]
    assert row["current"] == 3 and row["headroom"] == row["published"] - 3
    assert [s["stream"] for s in response.context["streams"]] == [
        ShopOrder._meta.get_field("number").stream
    ]
    assert response.context["streams"][0]["sequence"] >= 1 and order.number
    # (on SQLite the leases of earlier tests in this process may still be held beside it)
    assert node in {lease["worker_id"] for lease in response.context["leases"]}
    assert not (
        response.context["sequences_error"]
        or response.context["streams_error"]
        or response.context["leases_error"]
    )
    assert b"coupon" in response.content
    assert b"/admin/django_snowid/storestatus/" in client.get(reverse("admin:index")).content


def test_order_streams_show_their_last_number_and_rate(client, settings):
    """The rate counts the stream's numbers of the last minute in the database."""
    settings.SNOWID_ORDER_BACKEND = "database"
    numbers = [ShopOrder.objects.create(user_id=i).number for i in range(3)]
    field = ShopOrder._meta.get_field("number")
    fmt = field.format
    two_minutes_ago = fmt.local_second(datetime.now(timezone.utc)) - 120
    ShopOrder.objects.create(user_id=9, number=fmt.compose(two_minutes_ago, 5, 9))
    # The size of this process's next block (the rate of its last blocks sets it: here
    # set, since three numbers may or may not share a second).
    field.issuer()._blocks.sizer.size = 7
    response = _status_page(client)
    (row,) = response.context["streams"]
    assert row["last_number"] == max(numbers)
    assert row["rate_1min"] == round(3 / 60, 2)
    assert b"Numbers/s (last minute)" in response.content
    assert str(max(numbers)).encode() in response.content
    assert row["block_size"] == 7
    assert b"Block size (this process)" in response.content
    assert b'in its next store call">7</td>' in response.content


def test_a_streams_last_second_reads_as_a_utc_time(client, settings):
    """Not the store's raw "local second" (1795641080): the UTC time it stands for, in UTC
    whatever TIME_ZONE the site uses, for a stream whose stems are written in Tokyo."""
    settings.SNOWID_ORDER_BACKEND = "database"
    settings.SNOWID_ORDER_ZONE = "Asia/Tokyo"
    settings.TIME_ZONE = "Europe/Paris"
    order = ShopOrder.objects.create(user_id=7)
    moment = ShopOrder._meta.get_field("number").decode(order.number).time
    response = _status_page(client)
    (row,) = response.context["streams"]
    shown = moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert row["second_utc"] == shown
    html = response.content.decode()
    assert "<th>Last second (UTC)</th>" in html
    assert f">{shown}</td>" in html
    assert f"<td>{row['second']}</td>" not in html


def _status_page(client):
    user = User.objects.create_user("staff", password="pw", is_staff=True)
    user.user_permissions.set(page_permissions("view_status"))
    client.force_login(user)
    url = reverse("admin:snowid_status")
    assert url == "/admin/django_snowid/storestatus/"
    response = client.get(url)
    assert response.status_code == 200
    return response


def test_not_for_anonymous_or_non_staff(client):
    url = reverse("admin:snowid_status")
    assert client.get(url).status_code == 302
    client.force_login(User.objects.create_user("plain", password="pw"))
    assert client.get(url).status_code == 302


def test_without_the_sequences_app_the_page_shows_streams_and_leases(client):
    with modify_settings(INSTALLED_APPS={"remove": ["django_snowid.sequences"]}):
        response = _status_page(client)
    assert response.context["title"] == "Status of streams, leases and sequences"
    assert b"Named sequences are not installed" in response.content
    assert b'id="snowid-sequences"' not in response.content
    assert b'id="snowid-streams"' in response.content


@pytest.mark.parametrize("with_sequences", [True, False], ids=["sequences", "no-sequences"])
def test_the_index_link_and_the_page_have_one_title(client, with_sequences):
    change = {} if with_sequences else {"remove": ["django_snowid.sequences"]}
    with modify_settings(INSTALLED_APPS=change):
        page = _status_page(client)
        index = client.get(reverse("admin:index")).content.decode()
    link = re.search(r'<a href="/admin/django_snowid/storestatus/"[^>]*>([^<]+)</a>', index)
    assert link is not None
    assert page.context["title"] == link[1]
    assert f"<h1>{link[1]}</h1>" in page.content.decode()


@pytest.mark.parametrize(
    "source, says",
    [
        ("database", "a process takes one when it first issues an id"),
        ("static", "worker ids of the “static” source are not leased"),
    ],
)
def test_an_empty_lease_table_says_why(client, settings, source, says):
    settings.SNOWID_WORKER_ID_SOURCE = source
    page = _status_page(client)
    if page.context["leases"]:  # PostgreSQL: its database-id reservations are leases
        assert "No live lease" not in page.content.decode()
    else:
        assert says in page.content.decode()


@pytest.mark.redis
def test_with_redis_down_the_streams_are_unknown_not_absent(client, settings):
    from tests.support import free_port, redis_caches

    settings.CACHES = redis_caches(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens
    settings.SNOWID_ORDER_BACKEND = "redis"
    page = _status_page(client)
    html = page.content.decode()
    assert page.context["streams_error"]
    assert "No stream yet" not in html
    assert "unknown while the store cannot be read" in html
