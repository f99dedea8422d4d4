"""Both GraphQL views in a real browser: ``JSON.parse`` in Debian's Chromium keeps every
id, order number, foreign key and sequence value exact, because they travel as strings.

The control shows what the test guards against: the same numbers sent as JSON numbers
come out of ``JSON.parse`` changed.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.testapp.models import Customer, Parcel, Purchase, Shopper, Ticket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

QUERIES = {
    "/graphene/": "{ purchases { id number receipt shopper { id } } "
    "parcels { purchase { number } ticket { id publicId } } customers { number } }",
    "/strawberry/": "{ purchases { id shopperId number receipt } "
    "parcels { purchaseId ticketId } customers { number } }",
}

# POST each query from the page, JSON.parse the body as a browser's code does, and give
# back every leaf as [its JavaScript type, the string JavaScript makes of it].
READ_VALUES = """async (queries) => {
  const leaves = (value) => value !== null && typeof value === 'object'
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, leaves(v)]))
    : [typeof value, String(value)];
  const seen = {};
  for (const [path, query] of Object.entries(queries)) {
    const response = await fetch(path, {method: 'POST',
      headers: {'Content-Type': 'application/json'}, body: JSON.stringify({query})});
    seen[path] = leaves(JSON.parse(await response.text()));
  }
  return seen;
}"""
CONTROL = "numbers => numbers.map(n => String(JSON.parse(n)))"


def as_seen(value):
    """What READ_VALUES reports for a value the server sent, if JavaScript keeps it exact."""
    if isinstance(value, dict):
        return {key: as_seen(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return {str(i): as_seen(inner) for i, inner in enumerate(value)}
    if value is None:
        return ["object", "null"]
    return ["string" if isinstance(value, str) else "number", str(value)]


def sent(url: str, query: str) -> dict:
    """What the server sent, read exactly (Python's json keeps big integers)."""
    request = urllib.request.Request(
        url, json.dumps({"query": query}).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def test_json_parse_keeps_every_value_exact(page, live_server, settings):
    settings.SNOWID_ORDER_BACKEND = "database"
    purchases = [
        Purchase.objects.create(shopper=Shopper.objects.create(name=f"s{i}")) for i in range(3)
    ]
    for purchase in purchases:
        Parcel.objects.create(purchase=purchase, ticket=Ticket.objects.create(title="t"))
    Customer.objects.create()

    bodies = {path: sent(f"{live_server.url}{path}", q) for path, q in QUERIES.items()}
    numbers = [str(p.number) for p in purchases] + [str(p.receipt) for p in purchases]
    for body in bodies.values():
        assert "errors" not in body, body
        assert [row["number"] for row in body["data"]["purchases"]] == numbers[:3]
        assert [row["receipt"] for row in body["data"]["purchases"]] == numbers[3:]

    page.goto(f"{live_server.url}/admin/login/")
    seen = page.evaluate(READ_VALUES, QUERIES)
    control = page.evaluate(CONTROL, numbers)

    for path, body in bodies.items():
        assert seen[path] == as_seen(body), path
    # The shard survives: number % 16 is the shopper's id % 16.
    for row in bodies["/graphene/"]["data"]["purchases"]:
        assert int(row["number"]) % 16 == int(row["shopper"]["id"]) % 16
    # The control: sent as JSON numbers, the same order numbers come back changed.
    assert all(int(n) > 2**53 for n in numbers)
    assert [c for c, n in zip(control, numbers, strict=True) if c != n] != []
