"""The decode page in a real browser: Debian's Chromium driven by Playwright."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User

from tests.browser import log_in
from tests.support import page_permissions
from tests.testapp.models import DecimalOrder, Product, ShopOrder

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_staff_decodes_three_kinds_of_ids(page, live_server, settings, tmp_path):
    """Staff decode an id, an order number and a legacy value on the decode page.

    Slow: a live server and a real browser, page by page."""
    from playwright.sync_api import expect

    settings.SNOWID_ORDER_BACKEND = "database"
    staff = User.objects.create_user("staff", password="pw-staff", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(content_type__app_label="testapp"))
    staff.user_permissions.add(*page_permissions("view_decode"))
    product = Product.objects.create(name="tea")
    order = ShopOrder.objects.create(user_id=1820)
    decimal = DecimalOrder.objects.create(user_id=42)

    log_in(page, live_server.url, "staff", "pw-staff")
    with page.expect_navigation():
        page.get_by_role("link", name="Decode ids and order numbers").click()
    assert page.url.endswith("/admin/django_snowid/iddecoder/")
    page.fill("#id_ids", f"{product.pk}\n{order.number}, {decimal.number}")
    with page.expect_navigation():
        page.click("input[name=decode]")

    results = page.locator("section.snowid-result")
    expect(results).to_have_count(3)
    first, second, third = (results.nth(i) for i in range(3))
    assert first.locator("td[data-part=worker]").inner_text() == "3"
    assert "Snowflake" in first.locator(".snowid-reading").inner_text()
    assert second.locator("td[data-part=shard]").inner_text() == str(1820 % 16)
    assert third.locator("td[data-part=shard]").inner_text() == "42"
    assert third.locator("td[data-part=stem]").inner_text() == str(decimal.number).zfill(19)[:12]
    assert first.locator(".snowid-bits .snowid-cell").count() == 64
    assert (
        first.locator("a.snowid-link")
        .get_attribute("href")
        .endswith(f"/admin/testapp/product/{product.pk}/change/")
    )
    shot = tmp_path / "decode.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


def test_non_staff_user_is_refused(page, live_server):
    from playwright.sync_api import expect

    User.objects.create_user("customer", password="pw-customer")
    log_in(page, live_server.url, "customer", "pw-customer")
    assert "/admin/login/" in page.url
    expect(page.locator("#content-main, .errornote").first).to_contain_text("staff account")
    page.goto(f"{live_server.url}/admin/django_snowid/iddecoder/")
    assert "/admin/login/" in page.url
    assert page.locator("#snowid-decode-form").count() == 0


# ------------------------------------------------ times, contrast, many ids, layout
SHOTS = os.environ.get("SNOWID_SCREENSHOTS")  # a directory to keep the screenshots in


def shot(page, name: str, tmp_path, *, full_page: bool = True) -> None:
    directory = Path(SHOTS) if SHOTS else tmp_path
    directory.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(directory / f"{name}.png"), full_page=full_page)


@pytest.fixture
def superuser_page(page, live_server):
    User.objects.create_superuser("boss", password="pw-boss")
    log_in(page, live_server.url, "boss", "pw-boss")
    return page


def decode(page, live_server, ids: str, reading: str = "") -> None:
    page.goto(f"{live_server.url}/admin/django_snowid/iddecoder/")
    page.fill("#id_ids", ids)
    if reading:
        page.select_option("#id_reading", reading)
    with page.expect_navigation():
        page.click("input[name=decode]")


def command_json(*args: str) -> list[dict]:
    import json
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("snowid_decode", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("zone", ["Europe/Paris", "America/New_York"])
def test_utc_and_site_time_rows_agree_with_the_command(
    superuser_page, live_server, settings, zone, tmp_path
):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    settings.TIME_ZONE = zone
    settings.SNOWID_ORDER_BACKEND = "database"
    product = Product.objects.create(name="tea")
    order = ShopOrder.objects.create(user_id=7)
    page = superuser_page
    decode(page, live_server, f"{product.pk} {order.number}")
    cards = page.locator("section.snowid-result")
    expected = [
        command_json(str(product.pk))[0]["time"],
        command_json(str(order.number), "--field", "testapp.ShopOrder.number")[0]["time"],
    ]
    for index, iso in enumerate(expected):
        card = cards.nth(index)
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
        utc_text = card.locator("td[data-part=created-utc]").inner_text()
        # The page prints what the command prints: milliseconds for ids, none for orders.
        assert utc_text == iso.replace("T", " ").removesuffix("Z")
        local = moment.astimezone(ZoneInfo(zone))
        spec = "%Y-%m-%d %H:%M:%S.%f" if index == 0 else "%Y-%m-%d %H:%M:%S"
        local_text = local.strftime(spec)[: -3 if index == 0 else None]
        assert card.locator("td[data-part=created-local]").inner_text() == local_text
        assert (
            zone in card.locator("tr", has=page.locator("td[data-part=created-local]")).inner_text()
        )
        assert local_text != utc_text  # the zone is not UTC: the two rows must differ
    # The change-form panel and the changelist column print UTC too.
    page.goto(f"{live_server.url}/admin/testapp/product/{product.pk}/change/")
    panel = page.locator("table.snowid-panel").inner_text()
    assert f"{expected[0].replace('T', ' ').removesuffix('Z')} UTC" in panel
    page.goto(f"{live_server.url}/admin/testapp/product/")
    column = page.locator("td.field-snowid_created").first.inner_text()
    assert column == expected[0].replace("T", " ").removesuffix("Z")
    shot(page, f"changelist-{zone.replace('/', '-')}", tmp_path)


def _contrast(page, selector: str) -> float:
    return page.evaluate(
        """(selector) => {
        const el = document.querySelector(selector);
        const rgb = (s) => s.match(/[\\d.]+/g).map(Number);
        const lum = ([r, g, b]) => {
            const f = (c) => {
                c /= 255;
                return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
            };
            return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
        };
        let node = el, bg = null;
        while (node) {  // the first opaque background up the tree
            const c = rgb(getComputedStyle(node).backgroundColor);
            if (c.length < 4 || c[3] > 0) { bg = c; break; }
            node = node.parentElement;
        }
        bg = bg || [255, 255, 255];
        const fg = rgb(getComputedStyle(el).color);
        const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
        return (a + 0.05) / (b + 0.05);
    }""",
        selector,
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_error_headers_are_readable(browser, live_server, scheme, tmp_path):
    User.objects.create_superuser("boss", password="pw-boss")
    context = browser.new_context(color_scheme=scheme)
    page = context.new_page()
    try:
        log_in(page, live_server.url, "boss", "pw-boss")
        decode(page, live_server, "abc 12x 99999999999999999999")
        assert page.locator("section.snowid-error").count() == 3
        ratio = _contrast(page, "section.snowid-error h2")
        assert ratio >= 4.5, f"{scheme}: {ratio:.2f}:1"
        assert page.locator(".snowid-summary").inner_text() == "0 decoded, 3 with an error."
        shot(page, f"errors-{scheme}", tmp_path)
    finally:
        context.close()


def test_a_thousand_ids_make_a_table_and_export(superuser_page, live_server, tmp_path):
    """A thousand ids pasted, decoded and exported through the admin in Chromium.

    Slow: a page of a thousand rows rendered, then exported twice, in a real browser."""
    import csv
    import io
    import json

    from django_snowid.settings_layouts import get_layout

    products = [Product.objects.create(name=f"p{i}") for i in range(3)]
    layout = get_layout()
    tick = (
        layout.tick_at(products[0].created_at)
        if hasattr(products[0], "created_at")
        else (layout.decode(products[0].pk).tick)
    )
    values = [p.pk for p in products] + [
        layout.compose(tick - i, 5, i % 4096) for i in range(1, 997)
    ]
    values.append("not-an-id")  # one error among them
    page = superuser_page
    decode(page, live_server, "\n".join(map(str, values)))
    assert page.locator("section.snowid-result").count() == 0  # no cards for 1,000 ids
    rows = page.locator("table.snowid-table tbody tr")
    assert rows.count() == 1000
    summary = page.locator(".snowid-summary").inner_text()
    errors = page.locator("tr.snowid-error-row").count()
    assert summary == f"{1000 - errors} decoded, {errors} with an error."
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 1000 * 60, height  # one line a value, not a card
    first = rows.first.inner_text()
    assert str(products[0].pk) in first and "worker=3" in first
    assert rows.first.locator("a.snowid-link").count() == 1
    shot(page, "table-1000", tmp_path, full_page=False)

    with page.expect_download() as download:
        page.click("button[name=export][value=json]")
    data = json.loads(Path(download.value.path()).read_text())
    assert [d["value"] for d in data] == [str(v) for v in values]
    assert all(isinstance(d["value"], str) for d in data)
    assert data[0]["created_utc"] == rows.first.locator("td[data-part=created-utc]").inner_text()
    with page.expect_download() as download:
        page.click("button[name=export][value=csv]")
    records = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    assert len(records) == 1000 and records[0]["node"] == "worker=3"
    assert records[-1]["value"] == "not-an-id" and records[-1]["error"]


@pytest.mark.parametrize("width, sidebar", [(1280, True), (420, False)])
def test_the_bit_diagram_fits_without_overflow(browser, live_server, width, sidebar, tmp_path):
    User.objects.create_superuser("boss", password="pw-boss")
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        log_in(page, live_server.url, "boss", "pw-boss")
        product = Product.objects.create(name="tea")
        decode(page, live_server, str(product.pk))
        shot(page, f"bits-{width}", tmp_path)
        if sidebar:
            assert page.locator("#nav-sidebar").is_visible()
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{overflow} px of horizontal overflow at {width} px"
        bits = page.locator(".snowid-bits").first
        box = bits.bounding_box()
        content = page.locator("#content").bounding_box()
        assert box["x"] + box["width"] <= content["x"] + content["width"] + 1
        cells = page.locator(".snowid-bits .snowid-cell")
        assert cells.count() == 64
        right = max(
            c["x"] + c["width"]
            for c in cells.evaluate_all(
                "els => els.map(e => e.getBoundingClientRect())"
                ".map(r => ({x: r.x, width: r.width}))"
            )
        )
        assert right <= content["x"] + content["width"] + 1
        tops = set(
            cells.evaluate_all("els => els.map(e => Math.round(e.getBoundingClientRect().top))")
        )
        if width >= 1280:
            assert len(tops) == 1, f"the 64 bits take {len(tops)} lines"
        numbers = page.locator(".snowid-bitnums").first.inner_text().split()
        assert numbers == ["63"]  # the sign bit: a part of one bit shows one number
        assert "0" in page.locator(".snowid-bitnums").last.inner_text().split()
    finally:
        context.close()


def test_search_adds_the_id_match_to_search_fields(superuser_page, live_server):
    cups = Product.objects.create(name="Cups (4)")
    other = Product.objects.create(name="saucers")
    page = superuser_page
    page.goto(f"{live_server.url}/admin/testapp/product/")
    for term, expected in [
        ("4", {"Cups (4)"}),
        (str(other.pk), {"saucers"}),
        ("cups", {"Cups (4)"}),
    ]:
        page.fill("#searchbar", term)
        with page.expect_navigation():
            page.press("#searchbar", "Enter")
        names = set(page.locator("td.field-name, th.field-name").all_inner_texts())
        assert names == expected, (term, names)
    assert cups.pk != other.pk
