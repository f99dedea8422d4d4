"""What the browser tests share: Debian's Chromium driven by Playwright, logging in to the
admin, and a measure of what a page cuts off.

The fixtures ``browser`` (one Chromium per module) and ``page`` (a fresh context per
test) reach every test through ``conftest.py``; the tests that use them are marked
``browser`` and skipped (or failed under ``CI=true``) when Chromium or Playwright is
missing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    from tests.conftest import chromium_path

    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls
    # are still plain synchronous code.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            launched = playwright.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_ARGS
            )
            yield launched
            launched.close()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    yield context.new_page()
    context.close()


def log_in(page: Any, url: str, username: str, password: str) -> None:
    """Log in to the admin at ``url`` (the server's root) and wait for the index."""
    page.goto(f"{url}/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    with page.expect_navigation():
        page.click("input[type=submit]")


# For every cell of the tables ``selector`` finds: what of it the reader cannot see. A
# cell is cut off when its content is wider than the cell (``scrollWidth``), or when it
# ends right of what its scrolling container shows, or right of the window.
_CLIPPED_JS = """(selector) => {
    const found = [];
    const viewport = document.documentElement.clientWidth;
    for (const table of document.querySelectorAll(selector)) {
        let box = null;  // the nearest ancestor that scrolls or clips sideways
        for (let node = table.parentElement; node; node = node.parentElement) {
            const overflow = getComputedStyle(node).overflowX;
            if (overflow !== "visible") { box = node; break; }
        }
        const right = Math.min(viewport, box ? box.getBoundingClientRect().right : viewport);
        for (const cell of table.querySelectorAll("th, td")) {
            const rect = cell.getBoundingClientRect();
            if (rect.width === 0) continue;  // hidden (a collapsed column)
            const text = cell.innerText.trim().slice(0, 40);
            if (cell.scrollWidth > cell.clientWidth + 1) {
                found.push(`${text}: content ${cell.scrollWidth} px in ${cell.clientWidth} px`);
            } else if (rect.right > right + 1) {
                found.push(`${text}: ends at ${Math.round(rect.right)} px, shown up to ${right}`);
            }
        }
    }
    return found;
}"""


def clipped_cells(page: Any, selector: str) -> list[str]:
    """The cells of the tables matching ``selector`` that are cut off, described."""
    return list(page.evaluate(_CLIPPED_JS, selector))


def clipped_text(page: Any, selector: str) -> list[str]:
    """The elements matching ``selector`` whose text is wider than the element shows."""
    return list(
        page.evaluate(
            """(selector) => [...document.querySelectorAll(selector)]
                .filter((e) => e.scrollWidth > e.clientWidth + 1)
                .map((e) => `${e.innerText.trim()}: ${e.scrollWidth} px in ${e.clientWidth} px`)""",
            selector,
        )
    )
