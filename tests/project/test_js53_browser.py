"""The example project's ids in a real browser: JSON.parse in Debian's Chromium.

js53 ids travel as JSON numbers and keep every digit; 64-bit ids travel as strings
(SnowflakeJSONEncoder). The control shows what the test guards against: the same
64-bit id sent as a JSON number comes out of JSON.parse changed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.browser import CHROMIUM_ARGS
from tests.support import PROJECT, free_port, manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# JSON.parse each body in the page, and give back every id as the string JavaScript
# makes of the value it holds.
READ_IDS = """async () => {
  const cards = JSON.parse(await (await fetch('/gift-cards.json')).text());
  const orders = JSON.parse(await (await fetch('/orders.json')).text());
  return {
    cards: cards.gift_cards.map(c => [typeof c.id, String(c.id)]),
    orders: orders.orders.map(o => [typeof o.id, String(o.id), typeof o.public_id,
                                    String(o.public_id)]),
    control: orders.orders.map(o => String(JSON.parse(o.id))),
  };
}"""


@pytest.fixture
def shop_server(tmp_path):
    db = tmp_path / "shop.sqlite3"
    for step in (("migrate", "--noinput"), ("shop_demo",)):
        done = manage(*step, db=db)
        assert done.returncode == 0, done.stderr
    port = free_port()
    env = {
        **os.environ,
        "SHOP_DB_PATH": str(db),
        "PYTHONPATH": str(PROJECT.parent),
        "DJANGO_SETTINGS_MODULE": "shop_site.settings",
    }
    env.pop("SHOP_REDIS_URL", None)
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)


def test_ids_round_trip_through_json_parse(shop_server):
    from playwright.sync_api import sync_playwright

    from tests.conftest import chromium_path

    # What the server sent, read exactly (Python's json keeps big integers).
    with urllib.request.urlopen(f"{shop_server}/gift-cards.json") as response:
        cards = json.load(response)["gift_cards"]
    with urllib.request.urlopen(f"{shop_server}/orders.json") as response:
        orders = json.load(response)["orders"]
    assert len(cards) == 3 and len(orders) == 5

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{shop_server}/gift-cards.json")
            seen = page.evaluate(READ_IDS)
        finally:
            browser.close()

    assert seen["cards"] == [["number", str(c["id"])] for c in cards]
    assert all(c["id"] < 2**53 for c in cards)
    assert seen["orders"] == [["string", o["id"], "number", str(o["public_id"])] for o in orders]
    # The control: sent as numbers, the 64-bit ids would have come back changed.
    assert all(int(o["id"]) > 2**53 for o in orders)
    assert seen["control"] != [o["id"] for o in orders]
