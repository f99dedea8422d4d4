"""The admin's pages on a laptop and a phone: nothing a reader needs is cut off.

At 1280x800 with the admin's sidebar open, a changelist with the decoded columns and the
table of a dozen decoded values show every cell in full; at phone width the bit diagram
names every part. Screens to look at: ``SNOWID_SCREENSHOTS=dir`` keeps them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from django_snowid.settings_layouts import get_layout
from tests.browser import clipped_cells, clipped_text, log_in
from tests.testapp.models import DecimalOrder, Product, Purchase, Shopper

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
NAMES = ["Ada Lovelace", "Grace Hopper", "Katherine Johnson", "Alan Turing", "Edsger Dijkstra"]


@pytest.fixture
def open_page(browser, live_server, tmp_path):
    User.objects.create_superuser("boss", password="pw-boss")
    contexts = []

    def open_page(viewport: dict[str, int]):
        context = browser.new_context(viewport=viewport)
        contexts.append(context)
        page = context.new_page()
        log_in(page, live_server.url, "boss", "pw-boss")
        return page

    yield open_page
    for context in contexts:
        context.close()


def keep(page, name: str, tmp_path: Path) -> None:
    directory = Path(os.environ.get("SNOWID_SCREENSHOTS") or tmp_path)
    directory.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(directory / f"{name}.png"), full_page=True)


def purchases() -> list[Purchase]:
    shoppers = [Shopper.objects.create(name=name) for name in NAMES]
    return [Purchase.objects.create(shopper=shoppers[i % len(shoppers)]) for i in range(8)]


def decode(page, url: str, values: list[object]) -> None:
    page.goto(f"{url}/admin/django_snowid/iddecoder/")
    page.fill("#id_ids", "\n".join(map(str, values)))
    with page.expect_navigation():
        page.click("input[name=decode]")


def test_the_order_changelist_shows_every_column_at_1280_with_the_sidebar(
    open_page, live_server, settings, tmp_path
):
    settings.SNOWID_LAYOUT = "datacenter"  # the example shop's: two node parts to show
    purchases()
    page = open_page(LAPTOP)
    page.goto(f"{live_server.url}/admin/testapp/purchase/")
    keep(page, "changelist-1280", tmp_path)
    assert page.locator("#nav-sidebar").is_visible()
    assert page.locator("#changelist-filter").is_visible()  # the "created" filter beside it
    headers = page.locator("#result_list thead th").all_inner_texts()
    assert [h.strip().lower() for h in headers[-3:]] == ["created (utc)", "worker", "shard"]
    assert clipped_cells(page, "#result_list") == []


def test_a_dozen_decoded_values_fit_at_1280_with_the_sidebar(
    open_page, live_server, settings, tmp_path
):
    """Twelve decoded values fit the page at 1280 px beside the admin's sidebar.

    Slow: a live server and a real browser measuring the rendered page."""
    settings.SNOWID_LAYOUT = "datacenter"
    rows = purchases()
    products = [Product.objects.create(name=f"p{i}") for i in range(3)]
    decimal = DecimalOrder.objects.create(user_id=42)
    values = [
        *(p.pk for p in products),
        *(r.number for r in rows[:4]),
        *(r.receipt for r in rows[:4]),
        decimal.number,
    ]
    assert len(values) == 12
    page = open_page(LAPTOP)
    decode(page, live_server.url, values)
    keep(page, "decode-table-1280", tmp_path)
    assert page.locator("#nav-sidebar").is_visible()
    assert page.locator("table.snowid-table tbody tr").count() == 12
    assert clipped_cells(page, "table.snowid-table") == []


def test_the_export_buttons_look_like_the_admins_buttons(open_page, live_server):
    page = open_page(LAPTOP)
    decode(page, live_server.url, [Product.objects.create(name="tea").pk])
    looks = page.evaluate(
        """() => {
        const look = (el) => {
            const s = getComputedStyle(el);
            return [s.backgroundColor, s.color, s.borderRadius, s.borderStyle].join(" ");
        };
        const sample = document.createElement("a");  // the admin's own .button
        sample.className = "button";
        document.querySelector("#content-main").appendChild(sample);
        const admin = look(sample);
        sample.remove();
        return {admin, ours: [...document.querySelectorAll("button[name=export]")].map(look)};
    }"""
    )
    assert looks["ours"] == [looks["admin"]] * 2, looks


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280", "390"])
def test_the_bit_diagram_names_every_part_in_readable_numbers(
    open_page, live_server, viewport, tmp_path
):
    """The bit diagram names every part of an id with numbers a person reads.

    Slow: a live server and a real browser measuring the rendered page."""
    page = open_page(viewport)
    decode(page, live_server.url, [Product.objects.create(name="tea").pk])
    keep(page, f"bits-{viewport['width']}", tmp_path)
    layout = get_layout()
    labels = page.locator(".snowid-bits .snowid-label").all_inner_texts()
    assert [label.split("\n")[0] for label in labels] == [
        "sign",
        "time (ms)",
        *(part.name for part in layout.node_parts),
        "sequence",
    ]
    assert clipped_text(page, ".snowid-bits .snowid-label") == []
    assert clipped_text(page, ".snowid-bits .snowid-bitnums span") == []
    size = page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('.snowid-bitnums')).fontSize)"
    )
    assert size >= 11, f"bit numbers of {size} px"
    parts = page.locator("table.snowid-parts th").all_inner_texts()
    assert parts[0] == f"time (ms since {layout.epoch:%Y-%m-%d})", parts


def page_width(page) -> int:
    """How wide the page is laid out: wider than the window means sideways scrolling."""
    return int(page.evaluate("document.documentElement.scrollWidth"))


def test_the_status_page_fits_a_phone(open_page, live_server, settings, tmp_path):
    from django_snowid.ids.issuer import get_generator
    from django_snowid.sequences import next_value
    from django_snowid.workers.lease import release_all
    from tests.testapp.models import ShopOrder

    settings.SNOWID_ORDER_BACKEND = "database"
    settings.SNOWID_WORKER_ID_SOURCE = "database"
    settings.SNOWID_SEQUENCES = {"invoice": {"kind": "daily"}}
    ShopOrder.objects.create(user_id=1820)
    next_value("invoice")
    next_value("customer-number")
    get_generator(None)  # leases a worker id: a row of the leases table
    page = open_page(PHONE)
    try:
        page.goto(f"{live_server.url}/admin/django_snowid/storestatus/")
    finally:
        release_all()
    keep(page, "status-390", tmp_path)
    assert not page.locator("#snowid-leases tbody td").first.inner_text().startswith("No live")
    assert page_width(page) <= PHONE["width"]
    assert clipped_cells(page, "#content-main table") == []


def test_the_decode_table_shows_the_error_column_on_a_phone(open_page, live_server, tmp_path):
    values: list[object] = [Product.objects.create(name=f"p{i}").pk for i in range(10)]
    values += ["not-a-number", 2**63, "<b>html</b>", "7" * 60]
    page = open_page(PHONE)
    decode(page, live_server.url, values)
    keep(page, "decode-table-390", tmp_path)
    assert page.locator("table.snowid-table tbody tr").count() == len(values)
    assert page.locator("td.snowid-row-error").count() == 4
    assert clipped_cells(page, "table.snowid-table") == []
    assert page_width(page) <= PHONE["width"]
