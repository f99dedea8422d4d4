"""Concealed order numbers and check digits against real stores and databases: every
guarantee of plain numbers, the true positions for staff, recovery, checks and input."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from io import StringIO

import pytest
from django import forms
from django.core.management import CommandError, call_command
from django.test import override_settings

from django_snowid.exceptions import InvalidId
from django_snowid.orders.recovery import database_position
from django_snowid.orders.status import stream_rows
from tests.support import check_ids, forget, set_order_state
from tests.testapp.models import DecimalOrder, ShopOrder

pytestmark = pytest.mark.django_db

KEY = "concealed-order-numbers-test-key-0123456789"
NEW_KEY = "a-newer-key-for-the-numbers-from-2030-on-xyz"


@pytest.fixture
def concealed(settings):
    settings.SNOWID_ORDER_CONCEAL = True
    settings.SNOWID_ORDER_KEY = KEY


def field_of(model):
    return model._meta.get_field("number")


def test_concealed_numbers_are_unique_routed_and_issued_in_position_order(backend, concealed):
    fmt = field_of(ShopOrder).format
    assert fmt.conceal
    numbers = [ShopOrder.objects.create(user_id=1000 + i).number for i in range(40)]
    numbers += [
        o.number
        for o in ShopOrder.objects.bulk_create([ShopOrder(user_id=2000 + i) for i in range(60)])
    ]
    users = [1000 + i for i in range(40)] + [2000 + i for i in range(60)]
    assert len(set(numbers)) == 100
    assert [n % 16 for n in numbers] == [u % 16 for u in users]  # routing unchanged
    positions = [fmt.position(n) for n in numbers]
    assert positions == sorted(set(positions))
    seconds = [p[0] for p in positions]
    assert [fmt.split(n)[0] for n in numbers] == sorted(fmt.split(n)[0] for n in numbers)
    assert seconds == sorted(seconds)


def fill_one_second(count: int = 60) -> tuple[int, list[int]]:
    """``count`` concealed numbers of user 9 in one second, two seconds ahead, as the
    stream issued them: that second and the numbers."""
    fmt = field_of(ShopOrder).format
    second = fmt.local_second(datetime.now(timezone.utc)) + 2
    # A second whose last number is not its largest (one second in ``count`` is passed): the
    # tests tell the last position from the largest number.
    while max(range(1, count + 1), key=lambda q: fmt.compose(second, q, 9)) == count:
        second += 1
    numbers = [fmt.compose(second, q, 9) for q in range(1, count + 1)]
    ShopOrder.objects.bulk_create([ShopOrder(user_id=9, number=n) for n in numbers])
    return second, numbers


def test_recovery_finds_the_last_true_position_of_the_newest_second(backend, concealed):
    second, numbers = fill_one_second()
    fmt = field_of(ShopOrder).format
    assert fmt.position(max(numbers)) != (second, 60)  # the largest number is not the last
    found = database_position([field_of(ShopOrder)], fmt)
    assert found.position == (second, 60)
    assert found.last_number == fmt.compose(second, 60, 9)
    assert found.maxima == [(field_of(ShopOrder), max(numbers))]


def test_the_status_page_shows_the_last_number_issued_not_the_largest(backend, concealed):
    ShopOrder.objects.create(user_id=1)  # the store holds the stream
    second, numbers = fill_one_second()
    fmt = field_of(ShopOrder).format
    (row,) = [r for r in stream_rows() if r["stream"] == field_of(ShopOrder).stream]
    assert row["last_number"] == fmt.compose(second, 60, 9) != max(numbers)


def test_a_store_that_lost_writes_of_a_concealed_second_is_resynced(backend, concealed):
    """The store says it issued position 5 of a second whose 60 positions the table
    holds: the stream recovers past them, and no number is issued twice."""
    field = field_of(ShopOrder)
    field.issuer()
    second, numbers = fill_one_second()
    forget(field.stream)
    set_order_state(field.stream, (second, 5))
    field.issuer().recover()
    new = [ShopOrder.objects.create(user_id=7).number for _ in range(5)]
    assert not set(new) & set(numbers)
    assert all(field.format.position(n) > (second, 60) for n in new)


def test_a_collision_with_a_concealed_number_is_retried(backend, concealed):
    field = field_of(ShopOrder)
    field.issuer()
    second, numbers = fill_one_second(10)
    forget(field.stream)
    set_order_state(field.stream, (second, 3))  # the store lost 7 acknowledged numbers
    order = ShopOrder.objects.create(user_id=9)
    assert order.number not in numbers
    assert field.format.position(order.number) > (second, 10)


@pytest.mark.redis
def test_flushall_with_concealed_numbers_in_the_table_repeats_nothing(throwaway_redis, concealed):
    fmt = field_of(ShopOrder).format
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis"):
        numbers = [
            o.number
            for o in ShopOrder.objects.bulk_create([ShopOrder(user_id=3) for _ in range(300)])
        ]
        throwaway_redis.client().flushall()
        numbers += [ShopOrder.objects.create(user_id=3).number for _ in range(5)]
        throwaway_redis.restart()
        numbers += [ShopOrder.objects.create(user_id=3).number for _ in range(5)]
    positions = [fmt.position(n) for n in numbers]
    assert positions == sorted(set(positions))
    assert set(ShopOrder.objects.values_list("number", flat=True)) == set(numbers)


def test_snowid_recover_reads_concealed_seconds(backend, concealed):
    field = field_of(ShopOrder)
    second, _ = fill_one_second(30)
    forget(field.stream)
    out = StringIO()
    call_command("snowid_recover", "testapp.ShopOrder", stdout=out)
    assert "resumed" in out.getvalue()
    order = ShopOrder.objects.create(user_id=1)
    assert field.format.position(order.number) > (second, 30)


def test_the_decode_command_shows_the_true_position(concealed):
    fmt = field_of(ShopOrder).format
    number = fmt.compose(1_900_000_000, 1234, 5)
    out = StringIO()
    call_command("snowid_decode", "--field", "testapp.ShopOrder.number", str(number), stdout=out)
    shown = fmt.split(number)[1]
    assert f"sequence=1234 shard=5 shown_sequence={shown}" in out.getvalue()
    out = StringIO()
    call_command("snowid_decode", "--order", "--json", str(number), stdout=out)
    assert '"sequence": 1234' in out.getvalue() and f'"visible_sequence": {shown}' in out.getvalue()


def test_key_rotation_keeps_stored_numbers_readable(settings, concealed):
    old_format = field_of(ShopOrder).format
    number = old_format.compose(old_format.local_second_of_stem(291231235959), 77, 1)  # 2029
    settings.SNOWID_ORDER_KEY = [("2020-01-01T00:00:00Z", KEY), ("2030-01-01T00:00:00Z", NEW_KEY)]
    fmt = field_of(ShopOrder).format
    assert fmt.decode(number).sequence == 77
    later = fmt.compose(fmt.local_second_of_stem(300101000000), 77, 1)
    assert fmt.decode(later).sequence == 77
    settings.SNOWID_ORDER_KEY = NEW_KEY
    assert field_of(ShopOrder).format.decode(later).sequence == 77
    assert field_of(ShopOrder).format.decode(number).sequence != 77


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        (None, "SNOWID_ORDER_KEY is not set"),
        ("a-weak-key", "at least 32"),
        ([("2030-01-01", KEY), ("2029-01-01", NEW_KEY)], "not after"),
    ],
)
def test_a_missing_or_weak_key_is_a_check_error(key, problem, caplog):
    from django.core import checks

    with override_settings(SNOWID_ORDER_CONCEAL=True, SNOWID_ORDER_KEY=key):
        messages = [m for m in checks.run_checks(databases=[]) if m.id == "django_snowid.E215"]
        assert messages and problem in messages[0].msg
        for message in checks.run_checks(databases=[]):
            for secret in (KEY, NEW_KEY, "a-weak-key"):
                assert secret not in str(message)
    assert "django_snowid.E215" not in check_ids(SNOWID_ORDER_CONCEAL=True, SNOWID_ORDER_KEY=KEY)


def test_the_key_never_reaches_logs_or_pages(backend, concealed, caplog, admin_client, settings):
    pytest.importorskip("prometheus_client")
    from prometheus_client import CollectorRegistry, generate_latest

    from django_snowid.metrics.collector import SnowidCollector

    settings.SNOWID_METRICS = True
    caplog.set_level(logging.DEBUG)
    field = field_of(ShopOrder)
    ShopOrder.objects.create(user_id=1)
    forget(field.stream)
    ShopOrder.objects.create(user_id=1)  # a recovery, logged
    number = ShopOrder.objects.first().number
    pages = [
        admin_client.post("/admin/django_snowid/iddecoder/", {"ids": str(number)}),
        admin_client.get("/admin/django_snowid/storestatus/"),
    ]
    assert [p.status_code for p in pages] == [200, 200]
    true = field.format.decode(number)
    html = pages[0].content.decode()
    assert f'data-part="sequence">{true.sequence}<' in html
    assert f'data-part="sequence shown (concealed)">{true.visible_sequence}<' in html
    registry = CollectorRegistry()
    registry.register(SnowidCollector())
    scraped = generate_latest(registry).decode()
    assert "snowid_order_numbers_issued" in scraped
    texts = [caplog.text, scraped, *(p.content.decode() for p in pages)]
    for text in texts:
        assert KEY not in text and KEY[:16] not in text


# ------------------------------------------------------------------ check digits
@pytest.fixture
def damm(settings):
    settings.SNOWID_ORDER_CHECK_DIGIT = "damm"
    settings.SNOWID_ORDER_SEQUENCE_DIGITS = 4


def mistyped(number: int) -> str:
    text = str(number)
    return text[:-4] + str((int(text[-4]) + 3) % 10) + text[-3:]


def test_decimal_numbers_carry_a_check_digit(backend, damm):
    fmt = field_of(DecimalOrder).format
    assert fmt.check_digit == "damm" and not field_of(ShopOrder).format.check_digit
    orders = [DecimalOrder.objects.create(user_id=i) for i in range(5)]
    orders += DecimalOrder.objects.bulk_create([DecimalOrder(user_id=i) for i in range(5)])
    for order in orders:
        assert len(str(order.number)) == 19
        assert fmt.decode(order.number).shard == order.user_id % 100


def test_lookups_refuse_a_mistyped_number(backend, damm):
    order = DecimalOrder.objects.create(user_id=42)
    assert DecimalOrder.objects.get(number=order.number) == order
    assert DecimalOrder.objects.get(number=str(order.number)) == order
    assert list(DecimalOrder.objects.filter(number__in=[order.number])) == [order]
    with pytest.raises(InvalidId, match="fails its check digit"):
        DecimalOrder.objects.filter(number=mistyped(order.number)).exists()
    with pytest.raises(InvalidId, match="fails its check digit"):
        list(DecimalOrder.objects.filter(number__in=[order.number, int(mistyped(order.number))]))
    assert DecimalOrder.objects.filter(number__gte=0).count() == 1  # ranges are not numbers


def test_the_form_field_refuses_a_mistyped_number(damm):
    class OrderForm(forms.Form):  # a "find my order" form: the field is not editable
        user_id = forms.IntegerField()
        number = field_of(DecimalOrder).formfield()

    fmt = field_of(DecimalOrder).format
    good = fmt.compose(1_900_000_000, 12, 42)
    form = OrderForm(data={"user_id": "42", "number": mistyped(good)})
    assert not form.is_valid()
    assert "fails its check digit" in str(form.errors["number"])
    assert OrderForm(data={"user_id": "42", "number": str(good)}).is_valid()


def test_snowid_decode_refuses_a_mistyped_number(damm):
    good = field_of(DecimalOrder).format.compose(1_900_000_000, 12, 42)
    with pytest.raises(CommandError, match="fails its check digit"):
        call_command(
            "snowid_decode",
            "--field",
            "testapp.DecimalOrder.number",
            mistyped(good),
            stdout=StringIO(),
        )


def test_the_drf_field_refuses_a_mistyped_number(damm):
    pytest.importorskip("rest_framework")
    from rest_framework import serializers

    from django_snowid.drf import OrderNumberSerializerField

    field = OrderNumberSerializerField(model_field=field_of(DecimalOrder))
    good = field_of(DecimalOrder).format.compose(1_900_000_000, 12, 42)
    assert field.to_internal_value(str(good)) == good
    with pytest.raises(serializers.ValidationError, match="fails its check digit"):
        field.to_internal_value(mistyped(good))


def test_a_check_digit_the_column_cannot_hold_is_a_check_error():
    assert "django_snowid.E202" in check_ids(SNOWID_ORDER_CHECK_DIGIT="luhn")  # 12+5+2+1 digits


def test_the_drf_position_field_shows_the_true_position_to_staff(concealed):
    pytest.importorskip("rest_framework")
    from rest_framework import serializers

    from django_snowid.drf import OrderNumberPositionField

    class StaffOrderSerializer(serializers.ModelSerializer):
        position = OrderNumberPositionField(source="number")

        class Meta:
            model = ShopOrder
            fields = ["position"]

    fmt = field_of(ShopOrder).format
    order = ShopOrder(user_id=3, number=fmt.compose(1_900_000_000, 321, 3))
    data = StaffOrderSerializer(order).data["position"]
    assert data["sequence"] == 321 and data["shard"] == 3
    assert data["visible_sequence"] == fmt.split(order.number)[1] != 321
    assert data["number"] == str(order.number)


def test_the_status_page_counts_every_concealed_number_of_the_last_minute(concealed, settings):
    from django_snowid.orders.status import stream_rows

    settings.SNOWID_ORDER_BACKEND = "database"
    fmt = field_of(ShopOrder).format
    now = datetime.now(timezone.utc)
    start = fmt.local_second(now) - 59  # the window's first second: the bound that matters
    ShopOrder.objects.bulk_create(
        [ShopOrder(user_id=q, number=fmt.compose(start, q, q % 16)) for q in range(1, 61)]
    )
    field_of(ShopOrder).issuer()  # the stream is in the store
    (row,) = stream_rows(now.timestamp())
    assert row["rate_1min"] == 1.0


def test_the_admin_search_says_a_number_was_mistyped(backend, damm, admin_client):
    from django.urls import reverse

    from tests.testapp.models import Purchase, Shopper

    shopper = Shopper.objects.create(name="Ada")
    purchase = Purchase.objects.create(shopper=shopper)
    url = reverse("admin:testapp_purchase_changelist")
    found = admin_client.get(url, {"q": str(purchase.receipt)})
    assert list(found.context["cl"].result_list) == [purchase]
    wrong = admin_client.get(url, {"q": mistyped(purchase.receipt)})
    assert wrong.status_code == 200
    assert list(wrong.context["cl"].result_list) == []
    assert "fails its check digit" in wrong.content.decode()
    # A value of another column (the shopper's id) is searched without a word about it.
    other = admin_client.get(url, {"q": str(shopper.pk)})
    assert other.status_code == 200 and "check digit" not in other.content.decode()


def test_the_decode_page_looks_a_value_up_in_a_column_with_check_digits(damm, admin_client):
    """A Snowflake id looked up in every column of ours: a column whose check digit the
    value fails does not hold it, and says nothing."""
    from tests.testapp.models import Product

    product = Product.objects.create(name="tea")
    response = admin_client.post("/admin/django_snowid/iddecoder/", {"ids": str(product.pk)})
    assert response.status_code == 200
    (row,) = response.context["rows"]
    assert row.error == "" and row.holders


def test_snowid_decode_without_a_field_names_the_failed_check_digit(damm):
    good = field_of(DecimalOrder).format.compose(1_900_000_000, 12, 42)
    with pytest.raises(CommandError, match="fails its check digit"):
        call_command("snowid_decode", mistyped(good), stdout=StringIO())


def _traceback_text(exc_info) -> str:
    """What Django's technical 500 page shows of an exception: its frames' locals and the
    settings, as the HTML and as the frames' variables."""
    from django.test import RequestFactory
    from django.views.debug import ExceptionReporter

    reporter = ExceptionReporter(RequestFactory().get("/"), *exc_info)
    frames = reporter.get_traceback_data()["frames"]
    assert frames
    shown = [f"{name}={value}" for frame in frames for name, value in frame["vars"]]
    return "\n".join([*shown, reporter.get_traceback_html()])


def _secrets_of(key: str) -> list[str]:
    import hashlib

    shown = [key, key[:16], key[-16:]]
    if key.isprintable() and key.encode(errors="replace") == key.encode(errors="ignore"):
        digest = hashlib.sha256(b"django-snowid order-number key\x00" + key.encode()).digest()
        shown += [repr(digest)[2:26], digest.hex()[:24]]
    return shown


@pytest.mark.parametrize(
    "key",
    [
        "weak-secret-key-1234",  # refused: too short
        "\ud800-a-key-that-is-no-utf-8-text-0123456789",  # refused: cannot be encoded
        KEY,  # valid: the tables of a second fail to be made
    ],
    ids=["weak", "not-utf-8", "tables-fail"],
)
def test_a_traceback_never_shows_the_key_in_frame_locals(settings, monkeypatch, key):
    """Django's DEBUG page (and error trackers that capture locals) show every frame's
    local variables: no frame of ours may hold the key, its digest or a seed made of it."""
    import hashlib
    import sys

    from django_snowid.orders.formats import build_format

    settings.SNOWID_ORDER_CONCEAL = True
    settings.SNOWID_ORDER_KEY = key

    try:
        if key == KEY:
            fmt = build_format()
            monkeypatch.setattr(hashlib, "shake_256", len)  # then ".digest" fails
            fmt.compose(1_900_000_000, 5, 1)
        else:
            build_format()
    except Exception:
        kind, error, traceback = sys.exc_info()
    else:
        pytest.fail("nothing was raised")
    monkeypatch.undo()
    exc_info = (kind, error, traceback.tb_next)  # from the first frame of ours on
    text = _traceback_text(exc_info)
    for secret in _secrets_of(key):
        assert secret not in text
    if key != KEY:
        assert exc_info[0].__name__ == "LayoutError"
