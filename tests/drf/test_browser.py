"""The REST API in a real browser: ``JSON.parse`` in Debian's Chromium keeps every order
number, id and foreign key exact, because they travel as strings.

The control shows what the test guards against: the same order numbers sent as JSON
numbers come out of ``JSON.parse`` changed.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.testapp.models import Parcel, Purchase, Shopper

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

# Fetch each body in the page, JSON.parse it, and give back every value as the string
# JavaScript makes of what it holds (and its type).
READ_VALUES = """async (paths) => {
  const seen = {};
  for (const path of paths) {
    const body = JSON.parse(await (await fetch(path)).text());
    seen[path] = body.map(row => Object.fromEntries(Object.entries(row).map(
      ([key, value]) => [key, typeof value === 'object' && value !== null
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, [typeof v, String(v)]]))
        : [typeof value, String(value)]])));
  }
  return seen;
}"""
CONTROL = "numbers => numbers.map(n => String(JSON.parse(n)))"
PATHS = ["/api/purchases/", "/api/parcels/", "/api/nested-parcels/"]


def as_seen(value):
    """What READ_VALUES reports for a value the server sent, if JavaScript keeps it exact."""
    if isinstance(value, dict):
        return {key: as_seen(inner) for key, inner in value.items()}
    if value is None:
        return ["object", "null"]
    return ["string" if isinstance(value, str) else "number", str(value)]


def test_json_parse_keeps_every_order_number_exact(page, live_server, settings):
    settings.SNOWID_ORDER_BACKEND = "database"
    shoppers = [Shopper.objects.create(name=f"s{i}") for i in range(4)]
    purchases = [Purchase.objects.create(shopper=shopper) for shopper in shoppers]
    for purchase in purchases:
        Parcel.objects.create(purchase=purchase)

    # What the server sent, read exactly (Python's json keeps big integers).
    sent = {}
    for path in PATHS:
        with urllib.request.urlopen(f"{live_server.url}{path}") as response:
            sent[path] = json.load(response)
    numbers = [str(p.number) for p in purchases] + [str(p.receipt) for p in purchases]
    assert [row["number"] for row in sent["/api/purchases/"]] == numbers[:4]
    assert [row["receipt"] for row in sent["/api/purchases/"]] == numbers[4:]

    page.goto(f"{live_server.url}/api/")
    seen = page.evaluate(READ_VALUES, PATHS)
    control = page.evaluate(CONTROL, numbers)

    for path in PATHS:
        assert seen[path] == [as_seen(row) for row in sent[path]], path
    parcels = seen["/api/nested-parcels/"]
    assert [row["purchase"]["number"] for row in parcels] == [["string", n] for n in numbers[:4]]
    # The shard survives: number % 16 is the shopper's id % 16.
    for row in seen["/api/purchases/"]:
        assert int(row["number"][1]) % 16 == int(row["shopper"][1]) % 16
    # The control: sent as JSON numbers, the same order numbers come back changed.
    assert all(int(n) > 2**53 for n in numbers)
    assert [c for c, n in zip(control, numbers, strict=True) if c != n] != []
