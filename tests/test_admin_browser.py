"""The decode page in a real browser: Debian's Chromium driven by Playwright."""

from __future__ import annotations

import os

import pytest
from django.contrib.auth.models import Permission, User

from tests.testapp.models import DecimalOrder, Product, ShopOrder

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    from tests.conftest import chromium_path

    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls
    # are still plain synchronous code.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_ARGS
            )
            yield browser
            browser.close()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    yield page
    context.close()


def log_in(page, live_server, username: str, password: str) -> None:
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    # Every step that submits a form waits for the answer to load: reading the page before
    # then would read the old one.
    with page.expect_navigation():
        page.click("input[type=submit]")


def test_staff_decodes_three_kinds_of_ids(page, live_server, settings, tmp_path):
    from playwright.sync_api import expect

    settings.SNOWID_ORDER_BACKEND = "database"
    staff = User.objects.create_user("staff", password="pw-staff", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(content_type__app_label="testapp"))
    product = Product.objects.create(name="tea")
    order = ShopOrder.objects.create(user_id=1820)
    decimal = DecimalOrder.objects.create(user_id=42)

    log_in(page, live_server, "staff", "pw-staff")
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
    log_in(page, live_server, "customer", "pw-customer")
    assert "/admin/login/" in page.url
    expect(page.locator("#content-main, .errornote").first).to_contain_text("staff account")
    page.goto(f"{live_server.url}/admin/django_snowid/iddecoder/")
    assert "/admin/login/" in page.url
    assert page.locator("#snowid-decode-form").count() == 0
