"""Hostile input through every door: the API, ``snowid_decode``, the decode page and a
model admin's search, in three time zones. Each gets our own error, never Python's
``ValueError`` (``int()`` refuses more than 4,300 digits), a traceback or a 500."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

import django_snowid
from django_snowid.core.digits import MAX_DIGITS, parse_digits
from django_snowid.core.order_format import OrderNumberFormat
from django_snowid.exceptions import InvalidId
from tests.testapp.models import Product

pytestmark = pytest.mark.django_db

URL = "/admin/django_snowid/iddecoder/"
ZONES = ["Asia/Tokyo", "America/New_York", "Pacific/Kiritimati"]
HOSTILE = [
    "9" * 5000,  # int() itself refuses this
    "1" * 4301,
    "1" * 20,
    " 42 ",
    "42 ",
    "123\xa0",  # no-break space
    "\u3000123",  # ideographic space
    "\x1c7\x1f",  # control characters str.strip() removes
    "\t42",
    "١٢٣",  # Arabic-Indic digits: int() reads them
    "-5",
    "+5",
    "1_000",
    "1e5",
    "0x10",
    "",
]


@pytest.fixture(params=ZONES)
def zone(request, settings):
    settings.TIME_ZONE = request.param
    return request.param


@pytest.mark.parametrize("value", HOSTILE)
def test_the_parser_refuses_with_our_exception_and_one_wording(value):
    with pytest.raises(InvalidId, match="is not an id: ") as caught:
        parse_digits(value)
    assert len(str(caught.value)) < 200  # a pasted megabyte does not come back whole


def test_the_parser_reads_ascii_digits_up_to_19():
    assert parse_digits("0042") == 42
    assert parse_digits("9" * MAX_DIGITS) == 10**MAX_DIGITS - 1
    with pytest.raises(InvalidId, match="20 digits, at most 19"):
        parse_digits("1" * 20)
    with pytest.raises(InvalidId, match="expected a string"):
        parse_digits(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", HOSTILE)
def test_api_refuses_with_invalid_id(zone, value):
    with pytest.raises(InvalidId):
        django_snowid.decode(value)
    fmt = OrderNumberFormat()
    with pytest.raises(InvalidId):
        fmt.decode(value)


@pytest.mark.parametrize("reading", [[], ["--order"], ["--layout", "js"]])
def test_command_refuses_without_a_traceback(zone, reading):
    for value in HOSTILE:
        if not value:
            continue
        with pytest.raises(CommandError):
            call_command("snowid_decode", value, *reading, stdout=StringIO())


def test_page_reports_each_row_never_a_500(zone, admin_client):
    # The page splits on any space (a pasted list): the values with spaces are separators.
    tokens = "\n".join(v for v in HOSTILE if v and not re.search(r"[\s,;]", v))
    response = admin_client.post(URL, {"ids": tokens})
    assert response.status_code == 200
    rows = response.context["rows"]
    assert rows and all(row.error for row in rows), [r.raw for r in rows if not r.error]
    assert response.context["decoded"] == 0 and response.context["errors"] == len(rows)


def test_model_admin_search_never_a_500(zone, admin_client):
    Product.objects.create(name="Cups (4)")
    changelist = reverse("admin:testapp_product_changelist")
    for value in HOSTILE:
        response = admin_client.get(changelist, {"q": value})
        assert response.status_code == 200, value


def test_an_order_stem_out_of_the_date_range_is_refused(zone, admin_client):
    # 393242476544000016 >> 18 is a 13-digit stem: "dated 2150", written by no field.
    with pytest.raises(CommandError, match="more than 12 digits"):
        call_command("snowid_decode", "393242476544000016", "--order", stdout=StringIO())
    response = admin_client.post(URL, {"ids": "393242476544000016", "reading": ""})
    assert response.status_code == 200
    # The largest stem a format can write, in every reading: the page answers.
    fmt = OrderNumberFormat()
    last = fmt._pack(991231235959, 1, 0)
    response = admin_client.post(URL, {"ids": f"{last} 9223372036854775807 1"})
    assert response.status_code == 200


def test_zero_reads_the_same_through_api_command_and_page(admin_client):
    api = django_snowid.decode(0)
    data = json.loads(_decode_json("0", "--layout", "default"))
    (row,) = admin_client.post(URL, {"ids": "0", "reading": "layout:default"}).context["rows"]
    assert row.error == ""
    assert data[0]["time"] == django_snowid.decode(0).as_dict()["time"]
    assert row.decoded == api


def _decode_json(*args: str) -> str:
    out = StringIO()
    call_command("snowid_decode", *args, "--json", stdout=out)
    return out.getvalue()
