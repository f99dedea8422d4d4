"""Automatic reading considers every layout and order format of the project, puts first the
one whose row holds the value, and links to that row.

One case for each preset layout and each order format of the test app: the value of a
row that exists, pasted without a reading, must be read by its own layout (or format) and
linked to its row, on the decode page and by ``snowid_decode``.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from django_snowid.readings import decode_tokens
from django_snowid.settings_layouts import get_layout
from tests.support import page_permissions
from tests.testapp.models import (
    DecimalOrder,
    Product,
    ShardedOrder,
    ShopOrder,
    Ticket,
    TinyOrder,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("database_orders")]

URL = "/admin/django_snowid/iddecoder/"


def snowflake(layout: str) -> str:
    return f"Snowflake layout “{layout}”"


# case: (make the row, the field holding the value, the reading it must be read as)
CASES = {
    "classic": (lambda: Product.objects.create(name="tea"), "id", snowflake("default")),
    "datacenter": (lambda: Ticket.objects.create(title="t"), "public_id", snowflake("dc")),
    "js53": (lambda: Ticket.objects.create(title="t"), "id", snowflake("js")),
    "sharded": (lambda: ShardedOrder.objects.create(user_id=1820), "id", snowflake("sharded")),
    "sharded column": (
        lambda: ShardedOrder.objects.create(user_id=7, receipt=None),
        "receipt",
        snowflake("sharded"),
    ),
    # The presets no field of the test app uses, in the place of the layout "dc".
    "server-business": (lambda: Ticket.objects.create(), "public_id", snowflake("dc")),
    "sonyflake": (lambda: Ticket.objects.create(), "public_id", snowflake("dc")),
    "binary order number": (
        lambda: ShopOrder.objects.create(user_id=1820),
        "number",
        "testapp.ShopOrder.number",
    ),
    "decimal order number": (
        lambda: DecimalOrder.objects.create(user_id=42),
        "number",
        "testapp.DecimalOrder.number",
    ),
    "3-bit order number": (
        lambda: TinyOrder.objects.create(user_id=5),
        "number",
        "testapp.TinyOrder.number",
    ),
}


@pytest.fixture(autouse=True)
def preset_of_the_case(request, settings):
    """The server-business and sonyflake cases make "dc" that preset."""
    case = getattr(request.node, "callspec", None) and request.node.callspec.params.get("case")
    if case in ("server-business", "sonyflake"):
        settings.SNOWID_LAYOUTS = {**settings.SNOWID_LAYOUTS, "dc": case}


@pytest.fixture
def staff(client):
    user = User.objects.create_user("staff", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="testapp"))
    user.user_permissions.add(*page_permissions("view_decode"))
    client.force_login(user)
    return client


def make(case: str):
    create, field, reading = CASES[case]
    row = create()
    return row, getattr(row, field), reading


def change_url(row) -> str:
    opts = row._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[row.pk])


@pytest.mark.parametrize("case", CASES)
def test_the_decode_page_reads_a_stored_value_by_its_own_layout_and_links_it(staff, case):
    row, value, reading = make(case)
    (decoded,) = staff.post(URL, {"ids": str(value)}).context["rows"]
    assert decoded.error == ""
    assert decoded.reading == reading, decoded.why
    assert "detected" in decoded.why and "holds it" in decoded.why
    assert decoded.link == change_url(row)
    assert [url for _, url in decoded.links] == [change_url(row)]


@pytest.mark.parametrize("case", CASES)
def test_snowid_decode_reads_a_stored_value_by_its_own_layout_and_names_its_row(case):
    row, value, reading = make(case)
    out = StringIO()
    call_command("snowid_decode", str(value), "--json", stdout=out)
    (item,) = json.loads(out.getvalue())
    assert item["reading"].startswith(reading + ", detected"), item["reading"]
    label = f"{row._meta.label}.{CASES[case][1]}"
    assert item["held_by"] == [{"field": label, "pk": str(row.pk)}]
    text = StringIO()
    call_command("snowid_decode", str(value), stdout=text)
    assert f"held by {label} pk={row.pk}" in text.getvalue()


def test_other_readings_are_shown():
    order = ShardedOrder.objects.create(user_id=1820)
    (row,) = decode_tokens([str(order.pk)])
    assert row.reading == snowflake("sharded")
    assert dict(row.parts)["shard"] == 12
    # The default layout has the same time bits: an alternative, said so.
    assert any(snowflake("default") in other for other in row.alternatives), row.alternatives


def test_without_a_row_the_js53_id_is_read_as_js53_not_as_a_date_of_2020():
    layout = get_layout("js")
    value = layout.compose(layout.tick_at(timezone.now()), 3, 9)
    (row,) = decode_tokens([str(value)])
    assert row.reading == snowflake("js")
    assert dict(row.parts)["sequence"] == 9
    assert row.links == []


def test_rows_in_tables_the_user_may_not_view_are_neither_linked_nor_used(client):
    user = User.objects.create_user("plainstaff", password="pw", is_staff=True)
    user.user_permissions.set(page_permissions("view_decode"))  # the page, not the tables
    client.force_login(user)
    order = ShardedOrder.objects.create(user_id=1820)
    (row,) = client.post(URL, {"ids": str(order.pk)}).context["rows"]
    assert row.error == "" and row.link == "" and row.links == []
    assert "holds it" not in row.why


def test_every_table_of_a_field_of_that_layout_is_linked(staff):
    """A value held in two tables of one layout links to both rows."""
    order = ShardedOrder.objects.create(user_id=3)
    other = ShardedOrder.objects.create(user_id=4, receipt=order.pk)
    (row,) = staff.post(URL, {"ids": str(order.pk)}).context["rows"]
    assert row.reading == snowflake("sharded")
    assert sorted(url for _, url in row.links) == sorted([change_url(order), change_url(other)])
    html = staff.post(URL, {"ids": str(order.pk)}).content.decode()
    assert html.count('class="snowid-link"') == 2
