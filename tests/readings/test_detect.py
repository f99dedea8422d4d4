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


def test_a_number_that_fails_a_check_digit_is_not_read_silently_as_another_fields():
    """Two decimal formats of 19 digits, one with a check digit: a mistyped number of the
    one is a well-formed number of the other. Detection refuses, naming both."""
    from datetime import datetime, timezone

    from django_snowid.core.order_format import OrderNumberFormat
    from django_snowid.exceptions import CheckDigitMismatch
    from django_snowid.readings.detect import _detect
    from django_snowid.readings.kinds import OrderReading
    from django_snowid.readings.rows import DecodedRow

    damm = OrderNumberFormat(packing="decimal", sequence_digits=4, check_digit="damm")
    plain = OrderNumberFormat(packing="decimal")
    readings = [
        OrderReading("shop.PhoneOrder.number", damm.decode, (), format=damm),
        OrderReading("shop.Order.number", plain.decode, (), format=plain),
    ]
    now = datetime(2026, 12, 3, 8, 0, tzinfo=timezone.utc)
    second = damm.local_second(datetime(2026, 12, 3, 7, 58, 21, tzinfo=timezone.utc))
    good = damm.compose(second, 1, 43)
    typed = good + 1 if good % 10 != 9 else good - 1  # the check digit mistyped
    assert len(str(typed)) == 19 and plain.decode(typed)  # well-formed for the other
    with pytest.raises(CheckDigitMismatch) as caught:
        _detect(DecodedRow(raw=str(typed), value=typed), now, readings, [])
    message = str(caught.value)
    assert "fails the check digit of shop.PhoneOrder.number (damm)" in message
    assert "shop.Order.number" in message  # what it would be read as, said
    row = DecodedRow(raw=str(good), value=good)
    assert _detect(row, now, readings, []).label == "shop.PhoneOrder.number"


def test_a_value_of_another_length_is_no_mistyped_number_of_a_check_digit_field():
    """An 18-digit Snowflake id fails the check digit of a 19-digit format and, one digit
    changed, would even date (2009): it is no mistyped number of that field."""
    from datetime import datetime, timezone

    from django_snowid.core.order_format import OrderNumberFormat
    from django_snowid.readings.detect import _detect
    from django_snowid.readings.kinds import OrderReading, readings_of
    from django_snowid.readings.rows import DecodedRow

    damm = OrderNumberFormat(packing="decimal", sequence_digits=4, check_digit="damm")
    layout = get_layout()
    readings = [OrderReading("shop.PhoneOrder.number", damm.decode, (), format=damm)]
    readings += readings_of([])
    value = 912200249395646475
    now = datetime(2026, 11, 22, 5, 0, tzinfo=timezone.utc)
    assert layout.decode(value).time.year == 2026
    assert _detect(DecodedRow(raw=str(value), value=value), now, readings, []).label.startswith(
        "Snowflake layout"
    )
