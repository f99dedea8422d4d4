from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

import django_snowid
from django_snowid.exceptions import InvalidId
from django_snowid.settings_layouts import get_layout
from tests.support import ROOT, adopted, manage_in_subprocess


def run(*args: str) -> str:
    out = StringIO()
    call_command("snowid_decode", *args, stdout=out)
    return out.getvalue()


def test_decode_api_uses_the_configured_layouts():
    value = get_layout().compose(1000, 3, 7)
    decoded = django_snowid.decode(value)
    assert (decoded.tick, decoded.parts, decoded.sequence) == (1000, {"worker": 3}, 7)
    js = django_snowid.decode(value >> 10, layout="js")
    assert js.layout.name == "js"
    with pytest.raises(InvalidId, match="out of range for layout 'js'"):
        django_snowid.decode(2**53, layout="js")


def test_next_id_and_next_ids():
    first = django_snowid.next_id()
    more = django_snowid.next_ids(5)
    assert first < more[0] and more == sorted(more)
    assert django_snowid.next_id(layout="js") < 2**53


@pytest.mark.django_db  # the rows that hold the values are looked up
def test_command_text_and_json():
    layout = get_layout("dc")
    value = layout.compose(5000, layout.node_value({"datacenter": 2, "machine": 9}), 1)
    text = run(str(value), "--layout", "dc")
    assert "datacenter=2 machine=9" in text and "sequence=1" in text
    assert "2020-01-01T00:00:05.000Z" in text
    data = json.loads(run(str(value), str(value + 1), "--layout", "dc", "--json"))
    assert data[0]["id"] == str(value)  # a string: JSON numbers lose digits above 2**53
    assert data[1]["sequence"] == 2
    assert data[0]["parts"] == {"datacenter": 2, "machine": 9}


@pytest.mark.django_db  # the rows that hold the values are looked up
@pytest.mark.parametrize(
    "bad, message",
    [
        ("-1", "'-1' is not an id"),
        ("abc", "'abc' is not an id"),
        (str(2**63), "out of range"),
    ],
)
def test_command_rejects_bad_ids(bad, message):
    with pytest.raises(CommandError, match=message):
        run("123", bad)


def test_command_rejects_unknown_layout():
    with pytest.raises(CommandError, match="Unknown layout 'nope'"):
        run("1", "--layout", "nope")


def test_command_prints_the_valid_ids_and_exits_1_for_the_others_without_a_traceback():
    """Valid ids are printed among invalid ones; the exit status is 1, with no traceback.

    Slow: the command runs in a Django process of its own."""
    value = get_layout().compose(5000, 3, 1)
    args = ("snowid_decode", "nope", str(value), "--layout", "default", "--skip-checks")
    done = manage_in_subprocess(*args)
    assert done.returncode == 1
    assert "'nope' is not an id" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == f"{value}  2020-01-01T00:00:05.000Z  worker=3  sequence=1\n"
    detected = manage_in_subprocess("snowid_decode", "nope", str(value), "--skip-checks")
    assert detected.returncode == 1 and detected.stdout.startswith(f"{value}  2020-01-01")


@pytest.mark.django_db  # the rows that hold the values are looked up
def test_command_decodes_order_numbers():
    text = run("2504131200000000107", "--field", "testapp.DecimalOrder.number")
    assert "stem=250413120000 sequence=1 shard=7" in text
    data = json.loads(run(str((250413120000 << 18) | (3 << 4) | 12), "--order", "--json"))
    assert data[0]["kind"] == "order-number" and data[0]["shard"] == 12
    with pytest.raises(CommandError, match="not a yyMMddHHmmss"):
        run("12345", "--order")
    with pytest.raises(CommandError, match="names no Snowflake or order-number field"):
        run("1", "--field", "testapp.Nope.x")


@pytest.mark.django_db
def test_without_a_reading_an_order_number_is_read_as_one_and_said(settings):
    from tests.testapp.models import ShopOrder

    settings.SNOWID_ORDER_BACKEND = "database"
    order = ShopOrder.objects.create(user_id=1820)
    text = run(str(order.number))
    assert f"shard={1820 % 16}" in text and "[read as testapp.ShopOrder.number" in text
    (item,) = json.loads(run(str(order.number), "--json"))
    assert item["kind"] == "order-number" and item["reading"].startswith("testapp.ShopOrder")
    # Ids and order numbers print UTC alike: a "Z", seconds for order numbers.
    assert item["time"].endswith("Z") and "." not in item["time"]
    (snow,) = json.loads(run(str(order.pk), "--json"))
    assert snow["time"].endswith("Z") and "Snowflake" in snow["reading"]


@pytest.mark.django_db
def test_json_prints_the_readings_quotes_as_written():
    """What the Quick start shows: "Snowflake layout “default”", not "\\u201cdefault\\u201d"."""
    value = django_snowid.next_id()
    text = run(str(value), "--json")
    assert "\\u201c" not in text
    assert "Snowflake layout “default”" in text
    assert json.loads(text)[0]["reading"].startswith("Snowflake layout “default”")


def test_no_command_writes_json_but_through_the_one_helper():
    """Every command's ``--json`` prints non-ASCII text as written (``ensure_ascii=False``)."""
    package = ROOT / "django_snowid"
    for path in [
        *package.glob("management/commands/*.py"),
        *package.glob("*/management/commands/*.py"),
    ]:
        if path.name != "_json.py":
            assert "json.dumps(" not in path.read_text(), path


@pytest.fixture
def adopted_product():
    """testapp.Product adopted: its ids below its first Snowflake id are legacy ids."""
    from tests.testapp.models import Product

    product = Product.objects.create(name="tea")
    with adopted(Product, product.pk):
        yield product


@pytest.mark.django_db
@pytest.mark.parametrize("how", [(), ("--layout", "default"), ("--field", "testapp.Product.id")])
def test_a_legacy_id_is_printed_as_one_never_as_a_moment_of_2020(adopted_product, how):
    text = run("1", *how)
    assert text.startswith("1  legacy id, from before Snowflake ids were adopted")
    assert "testapp.Product" in text and "2020-01-01" not in text
    (item,) = json.loads(run("1", *how, "--json"))
    assert item["kind"] == "legacy" and item["id"] == "1" and "time" not in item
    new = run(str(adopted_product.pk), *how)
    assert "legacy" not in new and "worker=3" in new
