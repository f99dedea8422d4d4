"""``manage.py snowid_audit``: each defect, planted with raw SQL as another writer would
leave it, is found; clean data gives nothing and exit status 0."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import modify_settings, override_settings

from django_snowid.adopt.journal import forget
from django_snowid.audit import run_audit
from django_snowid.audit.scan import column_values
from django_snowid.models import IdAdoption
from django_snowid.sequences.models import SequenceMark
from django_snowid.settings_layouts import get_layout
from tests.testapp.models import (
    Customer,
    DecimalOrder,
    Legacy,
    Product,
    Review,
    ShardedOrder,
    ShopOrder,
    Ticket,
)

pytestmark = pytest.mark.django_db


def audit(*args: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of the command."""
    out, err = StringIO(), StringIO()
    try:
        call_command("snowid_audit", *args, stdout=out, stderr=err)
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def audit_json(*args: str) -> tuple[int, dict]:
    status, out, _ = audit("--json", *args)
    return status, json.loads(out)


def plant(model, pk, column: str, value: int) -> None:
    """Set ``column`` of row ``pk`` to ``value`` with raw SQL, past every Python check."""
    qn = connection.ops.quote_name
    table, pk_column = model._meta.db_table, model._meta.pk.column
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {qn(table)} SET {qn(column)} = %s WHERE {qn(pk_column)} = %s", [value, pk]
        )


def order_format():
    return ShopOrder._meta.get_field("number").format


def now_second(fmt) -> int:
    return fmt.local_second(datetime.now(timezone.utc))


def kinds(report: dict) -> set[tuple[str, str]]:
    return {(f["kind"], f["field"]) for f in report["findings"]}


def clean_rows() -> None:
    fmt = order_format()
    second = now_second(fmt) - 10
    for user in range(3):
        ShopOrder.objects.create(user_id=user, number=fmt.compose(second, user + 1, user))
    ticket = Ticket.objects.create(title="t")
    product = Product.objects.create(name="p")
    Review.objects.create(product=product)
    ShardedOrder.objects.create(user_id=5)
    ShardedOrder.objects.create(user_id=6)
    SequenceMark.objects.create(name="customer", value=10)
    Customer.objects.create(number=7)
    return ticket


def test_clean_data_gives_nothing_and_exit_0():
    clean_rows()
    status, report = audit_json()
    assert status == 0
    assert report["ok"] and report["findings"] == [] and report["counts"] == {}
    assert report["rows"]["testapp.Ticket.id"] == 1
    assert report["rows"]["testapp.ShopOrder.number"] == 3
    assert "testapp.Customer.number" in report["fields"]
    status, out, _ = audit()
    assert status == 0 and "No finding." in out


def test_an_empty_database_gives_nothing():
    assert audit()[0] == 0


def test_ids_from_the_future_are_found_by_the_injected_clock():
    ticket = Ticket.objects.create(title="made now")
    now = datetime.now(timezone.utc)
    assert run_audit("testapp.Ticket", now=now).total == 0
    report = run_audit("testapp.Ticket", now=now - timedelta(hours=1))
    assert report.counts == {"id_from_future": 2}  # its id and its public id
    assert {(f.field, f.pk) for f in report.findings} == {
        ("testapp.Ticket.id", str(ticket.pk)),
        ("testapp.Ticket.public_id", str(ticket.pk)),
    }
    # within the tolerance: nothing
    late = run_audit("testapp.Ticket", now=now - timedelta(seconds=30))
    assert late.total == 0


def test_an_id_planted_in_the_future_is_found_by_the_command():
    ticket = Ticket.objects.create(title="t")
    layout = get_layout("dc")
    ahead = layout.min_id_at(datetime.now(timezone.utc) + timedelta(days=1)) | 3
    plant(Ticket, ticket.pk, "public_id", ahead)
    status, report = audit_json()
    assert status == 1 and not report["ok"]
    assert report["counts"] == {"id_from_future": 1}
    (found,) = report["findings"]
    assert found["field"] == "testapp.Ticket.public_id" and found["value"] == str(ahead)
    assert found["pk"] == str(ticket.pk)


def test_ids_outside_their_layout_are_found():
    first = Ticket.objects.create(title="negative")
    second = Ticket.objects.create(title="too large")
    plant(Ticket, first.pk, "public_id", -5)
    too_large = get_layout("js").max_id + 1  # js53: 2**53, a valid bigint
    plant(Ticket, second.pk, "id", too_large)
    status, report = audit_json("--model", "testapp.Ticket")
    assert status == 1
    assert report["counts"] == {"id_outside_layout": 2}
    assert {(f["field"], f["value"]) for f in report["findings"]} == {
        ("testapp.Ticket.public_id", "-5"),
        ("testapp.Ticket.id", str(too_large)),
    }


@override_settings(SNOWID_WORKER_ID_SOURCE="database", SNOWID_WORKER_POOL_SIZE=4)
def test_a_worker_id_no_lease_of_the_pool_can_give_is_found():
    product = Product.objects.create(name="p")  # issued by a lease in 0..3
    layout = get_layout(None)
    decoded = layout.decode(product.pk)
    # The same moment from worker 9, outside a pool of 4.
    impossible = layout.compose(decoded.tick, layout.node_value(9), decoded.sequence)
    plant(Product, product.pk, "id", impossible)
    status, report = audit_json("testapp.Product")
    assert status == 1
    assert report["counts"] == {"id_outside_layout": 1}
    assert "SNOWID_WORKER_POOL_SIZE=4" in report["findings"][0]["detail"]


def test_one_worker_tick_in_two_tables_of_one_layout_is_found():
    """Two hosts that held one worker id in the same tick (a lease lost and taken, a
    cloned container) each wrote an id of that tick, node and sequence."""
    product = Product.objects.create(name="p")
    other = Product.objects.create(name="q")
    review = Review.objects.create(product=other)
    plant(Review, review.pk, "id", product.pk)
    status, report = audit_json("testapp")
    assert status == 1
    assert report["counts"] == {"worker_tick_reused": 1}
    (found,) = report["findings"]
    assert {found["field"], found["other"].split(" ")[0]} == {
        "testapp.Product.id",
        "testapp.Review.id",
    }


def test_one_worker_tick_with_two_shards_in_one_column_is_found():
    first = ShardedOrder.objects.create(user_id=1)
    second = ShardedOrder.objects.create(user_id=2)
    layout = get_layout("sharded")
    # The position of the first, with the shard of the second: a repeat of that tick.
    plant(ShardedOrder, second.pk, "id", first.pk - layout.shard_of(first.pk) + 2)
    status, report = audit_json("testapp.ShardedOrder")
    assert status == 1
    assert report["counts"] == {"worker_tick_reused": 1}
    assert report["findings"][0]["field"] == "testapp.ShardedOrder.id"


def test_order_numbers_from_the_future_are_found():
    fmt = order_format()
    ahead = fmt.compose(now_second(fmt) + 3600, 1, 1)
    order = ShopOrder.objects.create(user_id=1, number=fmt.compose(now_second(fmt) - 5, 1, 1))
    plant(ShopOrder, order.pk, "number", ahead)
    status, report = audit_json("testapp.ShopOrder")
    assert status == 1
    assert report["counts"] == {"order_from_future": 1}
    assert report["findings"][0]["value"] == str(ahead)


def test_values_outside_the_order_format_are_found():
    fmt = order_format()
    second = now_second(fmt) - 5
    orders = [
        ShopOrder.objects.create(user_id=i, number=fmt.compose(second, i + 1, i)) for i in range(3)
    ]
    stem_factor = (fmt.max_sequence + 1) * fmt.shard_count
    bad_month = 261301000000 * stem_factor + 1 * fmt.shard_count  # month 13
    no_sequence = fmt.compose(second, 9, 0) - 9 * fmt.shard_count  # sequence 0
    plant(ShopOrder, orders[0].pk, "number", bad_month)
    plant(ShopOrder, orders[1].pk, "number", no_sequence)
    plant(ShopOrder, orders[2].pk, "number", -1)
    status, report = audit_json("testapp.ShopOrder")
    assert status == 1
    assert report["counts"] == {"order_outside_format": 3}
    details = " ".join(f["detail"] for f in report["findings"])
    assert "yyMMddHHmmss" in details and "sequence 0" in details


@pytest.mark.parametrize("model", [ShopOrder, DecimalOrder])
def test_an_order_position_issued_twice_is_found(model):
    """Two numbers of one stream at one second and sequence, with different shards: what a
    Redis restart inside that second leaves. Binary and decimal packing."""
    fmt = model._meta.get_field("number").format
    second = now_second(fmt) - 5
    first = model.objects.create(user_id=1, number=fmt.compose(second, 4, 1))
    model.objects.create(user_id=3, number=fmt.compose(second, 4, 3) + 1)  # shard 4: fine
    again = model.objects.create(user_id=2, number=fmt.compose(second, 5, 2))
    plant(model, again.pk, "number", fmt.compose(second, 4, 2))
    status, report = audit_json(model._meta.label)
    assert status == 1
    assert report["counts"] == {"order_position_repeated": 2}
    found = report["findings"]
    label = f"{model._meta.label}.number"
    assert found[0]["other"] == f"{label} pk={first.pk}"
    assert found[1]["other"] == f"{label} pk={again.pk}"


def test_a_column_whose_values_repeat_is_read_past_value_and_pk():
    """Keyset pages of a non-unique column continue past (value, pk): none is skipped."""
    product = Product.objects.create(name="p")
    reviews = {Review.objects.create(product=product).pk for _ in range(3)}
    field = Review._meta.get_field("product")
    read = list(column_values(field, batch_size=1))
    assert sorted(pk for _, pk in read) == sorted(reviews)
    assert {value for value, _ in read} == {product.pk}


def test_sequence_values_above_the_mark_are_found():
    SequenceMark.objects.create(name="customer", value=10)
    Customer.objects.create(number=9)
    above = Customer.objects.create(number=8)
    plant(Customer, above.pk, "number", 25)
    status, report = audit_json("testapp.Customer")
    assert status == 1
    assert report["counts"] == {"sequence_above_mark": 1}
    assert report["findings"][0]["value"] == "25"
    assert "mark 10" in report["findings"][0]["detail"]


def test_without_the_sequences_app_its_fields_are_named_not_checked():
    with modify_settings(INSTALLED_APPS={"remove": ["django_snowid.sequences"]}):
        report = run_audit("testapp.Customer", now=datetime.now(timezone.utc))
    assert report.total == 0 and report.checked == []
    assert "django_snowid.sequences" in report.notes[0]


def test_findings_are_counted_beyond_the_samples_listed():
    fmt = order_format()
    second = now_second(fmt) + 3600
    for i in range(5):
        ShopOrder.objects.create(user_id=i, number=fmt.compose(second, i + 1, i))
    status, report = audit_json("--samples", "2", "testapp.ShopOrder")
    assert status == 1
    assert report["counts"] == {"order_from_future": 5}
    assert len(report["findings"]) == 2 and report["truncated"]


@pytest.mark.parametrize("batch_size", ["1", "2", "1000"])
def test_batches_read_every_row_once(batch_size):
    """Keyset pages: a batch ends exactly at a repeat's pair, or between them."""
    fmt = order_format()
    second = now_second(fmt) - 5
    for i in range(5):
        ShopOrder.objects.create(user_id=i, number=fmt.compose(second, i // 2 + 1, i % 2))
    status, report = audit_json("--batch-size", batch_size, "testapp.ShopOrder")
    assert report["rows"]["testapp.ShopOrder.number"] == 5
    assert report["counts"] == {"order_position_repeated": 2}
    assert status == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuchapp"], "not an installed app label"),
        (["--model", "testapp.Nope"], "not an installed model"),
        (["--model", "testapp"], "not app_label.ModelName"),
        (["--database", "nope"], "not in DATABASES"),
    ],
)
def test_bad_input_is_a_command_error_with_status_2(args, message):
    with pytest.raises(CommandError, match=message) as caught:
        call_command("snowid_audit", *args, stdout=StringIO())
    assert caught.value.returncode == 2


def test_a_layout_the_settings_cannot_build_is_a_command_error(settings):
    settings.SNOWID_LAYOUTS = {**settings.SNOWID_LAYOUTS, "dc": {"preset": "nope"}}
    with pytest.raises(CommandError, match="nope") as caught:
        call_command("snowid_audit", "testapp.Ticket", stdout=StringIO())
    assert caught.value.returncode == 2
    assert "could not read a table" not in str(caught.value)  # the settings' fault


def test_bad_numbers_are_refused_by_the_parser():
    with pytest.raises(CommandError, match=r"--batch-size: '0' is below 1"):
        call_command("snowid_audit", "--batch-size", "0", stdout=StringIO())


@pytest.fixture
def adopted_legacy():
    """testapp.Legacy switched to Snowflake ids a day ago: its old AutoField ids (up to
    millions, whose bits read as a worker id and a sequence) lie below the boundary."""
    started = datetime.now(timezone.utc) - timedelta(days=1)
    boundary = get_layout(None).min_id_at(started)
    old = [1, 2, 3, 4_999_999, 5_000_000]
    Legacy.objects.bulk_create([Legacy(id=pk, name="old") for pk in old])
    IdAdoption.objects.create(
        label="testapp.Legacy",
        table=Legacy._meta.db_table,
        column="id",
        first_id=boundary,
        old_max=max(old),
        state="done",
        started_at=started,
    )
    forget()
    yield boundary
    forget()


@override_settings(SNOWID_WORKER_ID_SOURCE="database", SNOWID_WORKER_POOL_SIZE=4)
def test_legacy_ids_of_an_adopted_model_are_no_findings(adopted_legacy):
    new = Legacy.objects.create(name="new")
    layout = get_layout(None)
    decoded = layout.decode(new.pk)
    # An id above the boundary is checked as before: worker 9 is outside a pool of 4.
    impossible = layout.compose(decoded.tick, layout.node_value(9), decoded.sequence)
    plant(Legacy, new.pk, "id", impossible)
    status, report = audit_json("testapp.Legacy")
    assert status == 1
    assert report["counts"] == {"id_outside_layout": 1}, report
    assert [f["value"] for f in report["findings"]] == [str(impossible)]
    assert report["rows"]["testapp.Legacy.id"] == 6
    assert any(
        f"testapp.Legacy.id: 5 legacy ids (below {adopted_legacy}" in note
        for note in report["notes"]
    ), report["notes"]


def test_a_repeated_concealed_position_names_its_true_sequence(settings):
    settings.SNOWID_ORDER_CONCEAL = True
    settings.SNOWID_ORDER_KEY = "audit-test-key-of-concealed-numbers-0123"
    fmt = order_format()
    second = now_second(fmt) - 5
    ShopOrder.objects.create(user_id=1, number=fmt.compose(second, 4, 1))
    ShopOrder.objects.create(user_id=2, number=fmt.compose(second, 4, 2))
    ShopOrder.objects.create(user_id=3, number=fmt.compose(second, 5, 3))
    status, report = audit_json("testapp.ShopOrder")
    assert status == 1
    assert report["counts"] == {"order_position_repeated": 1}
    assert "sequence 4 of stream" in report["findings"][0]["detail"]


def test_a_number_whose_check_digit_fails_is_outside_the_format(settings):
    settings.SNOWID_ORDER_CHECK_DIGIT = "damm"
    settings.SNOWID_ORDER_SEQUENCE_DIGITS = 4
    fmt = DecimalOrder._meta.get_field("number").format
    second = now_second(fmt) - 5
    good = DecimalOrder.objects.create(user_id=1, number=fmt.compose(second, 1, 1))
    bad = DecimalOrder.objects.create(user_id=2, number=fmt.compose(second, 2, 2))
    plant(DecimalOrder, bad.pk, "number", bad.number + 1 if bad.number % 10 < 9 else bad.number - 1)
    status, report = audit_json("testapp.DecimalOrder")
    assert status == 1
    assert report["counts"] == {"order_outside_format": 1}
    assert "check digit" in report["findings"][0]["detail"]
    assert good.number != bad.number


@pytest.mark.parametrize("batch_size", ["1", "2", "3", "1000"])
def test_legacy_ids_are_left_out_wherever_the_batches_end(adopted_legacy, batch_size):
    """A batch that holds a negative id, legacy ids and new ids is read in three parts."""
    Legacy.objects.create(id=-7, name="negative")
    Legacy.objects.create(name="new")
    status, report = audit_json("--batch-size", batch_size, "testapp.Legacy")
    assert report["counts"] == {"id_outside_layout": 1}, report
    assert [f["value"] for f in report["findings"]] == ["-7"]
    assert report["rows"]["testapp.Legacy.id"] == 7
    assert [note for note in report["notes"] if "5 legacy ids" in note], report["notes"]
    assert status == 1
