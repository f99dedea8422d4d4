from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from django_snowid.orders.stores import get_store
from tests.support import free_port, redis_caches, set_order_state
from tests.testapp.models import ShopOrder, Ticket, TinyOrder

pytestmark = pytest.mark.django_db


def recover(*args: str) -> str:
    out = StringIO()
    call_command("snowid_recover", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def stream_of(model):
    field = model._meta.get_field("number")
    return field.stream, field.format


def test_resumes_past_the_database_maximum(backend):
    stream, fmt = stream_of(ShopOrder)
    ahead = fmt.local_second(datetime.now(timezone.utc)) + 3
    ShopOrder.objects.create(user_id=1, number=fmt.compose(ahead, 77, 1))
    text = recover("--dry-run")
    assert "would resume" in text and "Dry run" in text
    assert get_store().read(stream) is None  # dry run wrote nothing
    text = recover()
    assert "testapp.ShopOrder.number" in text and "resumed" in text
    # the second after the database's largest number (ahead of the clock here)
    assert get_store().read(stream) == (ahead + 1, 0)
    # running again changes nothing, and it never lowers the store
    set_order_state(stream, (ahead + 2, 5))
    assert "unchanged" in recover("testapp.ShopOrder")
    assert get_store().read(stream) == (ahead + 2, 5)


def test_a_store_behind_the_database_resumes_after_the_clock(backend):
    """A store that went back (a failover, a restore) may have issued numbers still in
    flight up to its current second: it resumes at the next one."""
    stream, fmt = stream_of(ShopOrder)
    now = fmt.local_second(datetime.now(timezone.utc))
    ShopOrder.objects.create(user_id=1, number=fmt.compose(now - 5, 9, 1))
    set_order_state(stream, (now - 5, 3))
    recover("testapp.ShopOrder")
    second, sequence = get_store().read(stream)
    assert now + 1 <= second <= fmt.local_second(datetime.now(timezone.utc)) + 1
    assert sequence == 0


@pytest.mark.redis
@override_settings(SNOWID_ORDER_BACKEND="redis")
def test_dry_run_says_a_state_another_server_wrote_is_resynced():
    """A replica promoted by a failover holds a state the old primary wrote, here ahead of
    the database and the clock: the real run re-syncs past it, and the dry run says so."""
    stream, fmt = stream_of(ShopOrder)
    now = fmt.local_second(datetime.now(timezone.utc))
    ShopOrder.objects.create(user_id=1, number=fmt.compose(now - 5, 9, 1))
    set_order_state(stream, (now + 2, 4))
    store = get_store()
    client, key = store.client(), store.key(stream)
    client.hset(key, "rid", "another-server")
    written = client.hgetall(key)
    planned = json.loads(recover("--dry-run", "--json", "testapp.ShopOrder"))["streams"][0]
    assert planned["changed"] and planned["store_after"].endswith("#0")
    assert planned["store_before"] == _position_text(fmt, (now + 2, 4))
    assert planned["store_after"] == _position_text(fmt, (now + 3, 0))
    table = recover("--dry-run", "testapp.ShopOrder")
    assert "would resume" in table and _position_text(fmt, (now + 3, 0)) in table
    assert client.hgetall(key) == written  # neither dry run wrote a field
    done = json.loads(recover("--json", "testapp.ShopOrder"))["streams"][0]
    assert done == planned
    assert get_store().read(stream) == (now + 3, 0)


def _position_text(fmt, position) -> str:
    second, sequence = position
    return f"{fmt.stem_of_local_second(second):012d}#{sequence}"


def test_labels_limit_the_streams(backend):
    data = json.loads(recover("testapp.TinyOrder", "--json"))
    assert [row["field"] for row in data["streams"]] == ["testapp.TinyOrder.number"]
    # empty table: initialised at the second after the store's clock
    now = stream_of(TinyOrder)[1].local_second(datetime.now(timezone.utc))
    assert get_store().read(stream_of(TinyOrder)[0]) in {(now, 0), (now + 1, 0)}
    assert get_store().read(stream_of(ShopOrder)[0]) is None
    with pytest.raises(CommandError, match="'nope' is not an installed app label"):
        recover("nope")
    with pytest.raises(CommandError, match="not an installed model"):
        recover("testapp.Nope")


def test_new_numbers_follow_the_recovered_ones(backend):
    _, fmt = stream_of(ShopOrder)
    ahead = fmt.local_second(datetime.now(timezone.utc)) + 2
    top = ShopOrder.objects.create(user_id=1, number=fmt.compose(ahead, 500, 1))
    recover()
    assert ShopOrder.objects.create(user_id=1).number > top.number


@pytest.mark.redis
def test_unreachable_store_exits_1():
    with (
        override_settings(
            CACHES=redis_caches(f"redis://127.0.0.1:{free_port()}/0"), SNOWID_ORDER_BACKEND="redis"
        ),
        pytest.raises(CommandError, match="unreachable"),
    ):
        recover()


def test_reports_snowflake_columns_ahead_of_the_clock():
    from django_snowid.settings_layouts import get_layout

    layout = get_layout("js")
    tick = layout.tick_at(datetime.now(timezone.utc) + timedelta(hours=1))
    Ticket.objects.create(pk=layout.compose(tick, 3, 0))
    err = StringIO()
    with override_settings(SNOWID_ORDER_BACKEND="database"):
        call_command("snowid_recover", stdout=StringIO(), stderr=err)
    assert "testapp.Ticket.id" in err.getvalue() and "ahead of this host's clock" in err.getvalue()


def test_a_column_of_another_format_is_continued_above(backend):
    """Order numbers of an older format (``PlainAuto`` ids standing for them here): the
    stream resumes past them, so every new number is larger, whatever the old format."""
    from tests.testapp.models import PlainAuto

    stream, fmt = stream_of(ShopOrder)
    now = fmt.local_second(datetime.now(timezone.utc))
    # An old number whose digits read as no date: 2 minutes ahead, then month 13.
    ahead = fmt.compose(now + 120, 5, 0)
    stem = fmt.stem_of_local_second(now)
    undated = (stem // 10**10 * 10**10 + 13 * 10**8) * fmt._stem_factor  # this year, month 13
    PlainAuto.objects.create(id=ahead, name="old")
    text = recover("testapp.ShopOrder", "--above", "testapp.PlainAuto.id")
    assert "testapp.PlainAuto.id" in text and str(ahead) in text
    assert get_store().read(stream) == (now + 121, 0)
    PlainAuto.objects.create(id=undated, name="older format")
    recover("testapp.ShopOrder", "--above", "testapp.PlainAuto.id")
    second, sequence = get_store().read(stream)
    # The next number the stream issues, and the last it could have issued before.
    following = (second + 1, 1) if sequence >= fmt.max_sequence else (second, sequence + 1)
    assert fmt.compose(*following, 0) > undated > fmt.compose(second - 1, fmt.max_sequence, 0)


def test_above_refuses_a_column_no_number_can_pass(backend):
    from tests.testapp.models import PlainAuto

    PlainAuto.objects.create(id=2**63 - 1, name="too large")
    with pytest.raises(CommandError, match="larger than every number of this format"):
        recover("--above", "testapp.PlainAuto.id")
    with pytest.raises(CommandError, match="names no column of an installed model"):
        recover("--above", "testapp.Nope.id")
