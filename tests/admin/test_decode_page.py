"""The admin's decode page and the model-admin mixin, through the test client."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from django_snowid.settings_layouts import get_layout
from tests.support import page_permissions
from tests.testapp.models import DecimalOrder, Product, ShopOrder

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("database_orders")]

URL = "/admin/django_snowid/iddecoder/"


def test_staff_without_view_permission_gets_no_link(client):
    user = User.objects.create_user("plainstaff", password="pw", is_staff=True)
    user.user_permissions.set(page_permissions("view_decode"))  # the page, not the tables
    client.force_login(user)
    product = Product.objects.create(name="tea")
    (row,) = client.post(URL, {"ids": str(product.pk)}).context["rows"]
    assert row.error == "" and row.link == ""


def test_url_name_and_index_link(admin_client):
    assert reverse("admin:snowid_decode") == URL
    index = admin_client.get("/admin/")
    assert index.status_code == 200
    assert f'href="{URL}"' in index.content.decode()
    assert "Decode ids and order numbers" in index.content.decode()


def test_get_writes_nothing(admin_client):
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(URL)
    assert response.status_code == 200
    statements = " ".join(q["sql"].split()[0].upper() for q in queries.captured_queries)
    assert "INSERT" not in statements and "UPDATE" not in statements and "DELETE" not in statements
    assert response.templates[0].name == "admin/django_snowid/decode.html"


def test_non_staff_are_sent_to_the_login(client):
    user = User.objects.create_user("customer", password="pw")
    client.force_login(user)
    response = client.get(URL)
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    client.logout()
    assert client.get(URL).status_code == 302


def test_decodes_three_kinds_and_links_to_the_row(admin_client):
    product = Product.objects.create(name="tea")
    order = ShopOrder.objects.create(user_id=1820)
    decimal = DecimalOrder.objects.create(user_id=7)
    response = admin_client.post(URL, {"ids": f"{product.pk}, {order.number}\n{decimal.number}"})
    html = response.content.decode()
    assert response.status_code == 200
    rows = response.context["rows"]
    assert [r.error for r in rows] == ["", "", ""]
    assert [r.kind for r in rows] == ["snowflake", "order", "order"]
    assert dict(rows[0].parts)["worker"] == 3
    assert dict(rows[1].parts)["shard"] == 1820 % 16
    assert dict(rows[2].parts)["shard"] == 7
    assert "detected" in rows[0].why
    assert rows[0].link == reverse("admin:testapp_product_change", args=[product.pk])
    assert rows[1].link == reverse("admin:testapp_shoporder_change", args=[order.pk])
    assert len("".join(s.cells for s in rows[0].bits)) == 64
    assert len("".join(s.cells for s in rows[1].bits)) == 64
    assert [s.name for s in rows[2].digits] == ["stem", "sequence", "shard"]
    assert "Open the row that holds it" in html


def test_explicit_reading(admin_client):
    layout = get_layout("js")
    value = layout.compose(
        layout.tick_at(__import__("datetime").datetime.now(__import__("datetime").timezone.utc)),
        3,
        9,
    )
    response = admin_client.post(URL, {"ids": str(value), "reading": "layout:js"})
    (row,) = response.context["rows"]
    assert row.error == "" and dict(row.parts)["sequence"] == 9
    assert row.why == "chosen"


@pytest.mark.parametrize(
    "ids, where, message",
    [
        ("", "form", "This field is required"),
        ("  ,\n ", "form", "Enter at least one id"),
        (" ".join(["1"] * 1001), "form", "At most 1,000 ids at once; got 1,001"),
        ("abc", "row", "only the digits 0-9"),
        ("-1", "row", "only the digits 0-9"),
        (str(2**63), "row", "out of range"),
        ("1" * 40, "row", "40 digits, at most 19"),
        ("١٢٣", "row", "only the digits 0-9"),
        ("<script>alert(1)</script>", "row", "only the digits 0-9"),
        ("<b>7</b>", "row", "only the digits 0-9"),
    ],
)
def test_bad_input_is_reported_never_a_server_error(admin_client, ids, where, message):
    response = admin_client.post(URL, {"ids": ids})
    assert response.status_code == 200
    html = response.content.decode()
    if where == "form":
        assert not response.context["rows"]
        assert message in html
    else:
        (row,) = response.context["rows"]
        assert message in row.error
    assert "<script>alert" not in html and "<b>7</b>" not in html


def test_tokens_near_the_epoch_are_not_forced_into_a_reading(admin_client):
    (row,) = admin_client.post(URL, {"ids": "123"}).context["rows"]
    assert row.error == "" or "neither" in row.error


def test_mixin_columns_filter_search_and_panel(admin_client):
    product = Product.objects.create(name="teapot")
    other = Product.objects.create(name="cup")
    changelist = admin_client.get(reverse("admin:testapp_product_changelist"))
    html = changelist.content.decode()
    assert "created" in html and "worker=3" in html
    found = admin_client.get(reverse("admin:testapp_product_changelist"), {"q": str(product.pk)})
    assert list(found.context["cl"].result_list) == [product]
    recent = admin_client.get(reverse("admin:testapp_product_changelist"), {"snowid_created": "1h"})
    assert set(recent.context["cl"].result_list) == {product, other}
    change = admin_client.get(reverse("admin:testapp_product_change", args=[product.pk]))
    assert "snowid-panel" in change.content.decode() and "worker 3" in change.content.decode()
    order = ShopOrder.objects.create(user_id=5)
    orders = admin_client.get(
        reverse("admin:testapp_shoporder_changelist"), {"q": str(order.number)}
    )
    assert list(orders.context["cl"].result_list) == [order]
    assert ">5<" in orders.content.decode()  # the shard column


def test_search_with_words_does_not_fail(admin_client):
    Product.objects.create(name="teapot")
    response = admin_client.get(reverse("admin:testapp_product_changelist"), {"q": "tea pot"})
    assert response.status_code == 200


def test_static_files_are_collected(tmp_path, settings):
    from django.contrib.staticfiles import finders
    from django.core.management import call_command

    settings.STATIC_ROOT = str(tmp_path)
    settings.DEBUG = False
    call_command("collectstatic", interactive=False, verbosity=0)
    assert (tmp_path / "django_snowid" / "decode.css").stat().st_size > 0
    assert finders.find("django_snowid/decode.css")


def test_no_inline_script_or_style_for_a_strict_csp(admin_client):
    from pathlib import Path

    import django_snowid

    templates = Path(django_snowid.__file__).parent / "templates"
    for template in templates.rglob("*.html"):
        text = template.read_text()
        assert "<script" not in text and "style=" not in text and "<style" not in text, template
    html = admin_client.post(URL, {"ids": "123 456"}).content.decode()
    assert " style=" not in html.split('id="content-main"')[1]


def test_created_column_sorts_by_primary_key_and_prints_utc(admin_client, settings):
    settings.TIME_ZONE = "Asia/Tokyo"
    products = [Product.objects.create(name=f"p{i}") for i in range(3)]
    url = reverse("admin:testapp_product_changelist")
    columns = admin_client.get(url).context["cl"].list_display
    index = columns.index("snowid_created")
    ascending = admin_client.get(url, {"o": str(index)}).context["cl"].result_list
    assert list(ascending) == sorted(products, key=lambda p: p.pk)
    descending = admin_client.get(url, {"o": f"-{index}"}).context["cl"].result_list
    assert list(descending) == sorted(products, key=lambda p: p.pk, reverse=True)
    html = admin_client.get(url).content.decode()
    utc = get_layout().decode(products[0].pk).time.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    assert utc in html  # UTC, not Tokyo's wall clock
    assert "django_snowid/changelist.css" in html  # the decoded columns do not wrap


def test_an_all_digit_search_keeps_the_search_fields_results(admin_client):
    cups = Product.objects.create(name="Cups (4)")
    other = Product.objects.create(name="saucers")
    url = reverse("admin:testapp_product_changelist")
    assert list(admin_client.get(url, {"q": "4"}).context["cl"].result_list) == [cups]
    assert list(admin_client.get(url, {"q": str(other.pk)}).context["cl"].result_list) == [other]
    # Both at once: a name containing the digits and the row whose id they are.
    named = Product.objects.create(name=f"box {other.pk}")
    assert set(admin_client.get(url, {"q": str(other.pk)}).context["cl"].result_list) == {
        other,
        named,
    }


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris"])
def test_a_time_is_shown_once_when_the_site_runs_on_utc(admin_client, settings, zone):
    """The card and the change-form panel print the site's time beside UTC only when it
    reads otherwise."""
    settings.TIME_ZONE = zone
    product = Product.objects.create(name="tea")
    utc = get_layout().decode(product.pk).time.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    card = admin_client.post(URL, {"ids": str(product.pk)}).content.decode()
    change = admin_client.get(reverse("admin:testapp_product_change", args=[product.pk]))
    panel = change.content.decode().split('class="snowid-panel"')[1].split("</table>")[0]
    if zone == "UTC":
        assert card.count(utc) == 1, card
        assert 'data-part="created-local"' not in card
        assert panel.count(utc) == 1, panel
    else:
        assert card.count(utc) == 1 and 'data-part="created-local"' in card
        assert "Europe/Paris" in card and "Europe/Paris" in panel


KEY = "a-test-key-of-at-least-32-characters!!"


def test_the_bits_of_a_concealed_number_name_the_sequence_they_show(admin_client, settings):
    settings.SNOWID_ORDER_CONCEAL = True
    settings.SNOWID_ORDER_KEY = KEY
    order = ShopOrder.objects.create(user_id=7)
    (row,) = admin_client.post(URL, {"ids": str(order.number)}).context["rows"]
    parts = dict(row.parts)
    names = [segment.name for segment in row.bits]
    assert "sequence shown (concealed)" in names and "sequence" not in names
    (shown,) = [s for s in row.bits if s.name == "sequence shown (concealed)"]
    assert shown.value == parts["sequence shown (concealed)"]


def test_a_legacy_id_is_counted_as_one_not_as_an_error(admin_client):
    from tests.support import adopted

    product = Product.objects.create(name="tea")
    with adopted(Product, product.pk):
        response = admin_client.post(URL, {"ids": f"5 {product.pk}"})
    legacy, new = response.context["rows"]
    assert legacy.error == "" and legacy.kind == "legacy" and new.kind == "snowflake"
    assert legacy.note.startswith("legacy id, from before Snowflake ids were adopted")
    assert (response.context["decoded"], response.context["legacy"]) == (1, 1)
    assert response.context["errors"] == 0
    html = response.content.decode()
    assert "1 decoded, 1 legacy id." in html and "with an error" not in html
    assert "5: a legacy id, from before Snowflake ids were adopted" in html


def test_an_order_number_beside_its_rows_creation_says_its_second_may_be_the_next(admin_client):
    from django_snowid.readings import time_texts
    from tests.testapp.models import Purchase, Shopper

    purchase = Purchase.objects.create(shopper=Shopper.objects.create(name="s"))
    response = admin_client.post(URL, {"ids": str(purchase.number)})
    (row,) = response.context["rows"]
    created = time_texts(Purchase._meta.pk.decode(purchase.pk).time, milliseconds=True)[0]
    assert row.rows_created == [("testapp.Purchase", created)]
    html = response.content.decode()
    assert "row created (UTC, testapp.Purchase)" in html and created in html
    assert "can be one second after its row&#x27;s creation" in html


def test_the_change_forms_panel_says_a_numbers_second_may_follow_the_rows_creation(
    admin_client,
):
    from tests.testapp.models import Purchase, Shopper

    purchase = Purchase.objects.create(shopper=Shopper.objects.create(name="s"))
    change = admin_client.get(reverse("admin:testapp_purchase_change", args=[purchase.pk]))
    html = change.content.decode()
    assert "snowid-panel" in html
    assert "can be one second after its row&#x27;s creation" in html
