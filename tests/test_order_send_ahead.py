"""Order numbers sent ahead: the Redis reservation leaves when save() starts.

The reply is read when the INSERT is compiled. These tests pin down what that must never
change: each number is the reply to its own request, in the order the saves started, and
a save that fails in between leaves a gap, never a duplicate or a shifted reply.
"""

from __future__ import annotations

import pytest
import redis
from django.db import transaction
from django.db.models.signals import pre_save

from django_snowid.ordernumbers.issuer import get_store
from django_snowid.ordernumbers.redischannel import Channel
from tests.testapp.models import GiftOrder, RushOrder, ShopOrder

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture
def redis_backend(settings):
    settings.SNOWID_ORDER_BACKEND = "redis"


@pytest.fixture
def channel(settings):
    pool = redis.ConnectionPool.from_url(settings.REDIS_URL)
    channel = Channel(pool.connection_class(**pool.connection_kwargs))
    yield channel
    channel.connection.disconnect()


def echo(channel: Channel, text: str):
    return channel.send(channel.pack("ECHO", text))


def test_replies_go_to_their_own_requests_whatever_order_they_are_read_in(channel):
    first, second, third = (echo(channel, t) for t in ("one", "two", "three"))
    assert third.result() == b"three"  # reads (and keeps) the two replies before it
    assert first.result() == b"one"
    assert second.result() == b"two"


def test_a_request_never_read_does_not_shift_the_next_reply(channel):
    echo(channel, "abandoned")
    assert echo(channel, "next").result() == b"next"
    assert echo(channel, "after").result() == b"after"


def test_a_redis_error_belongs_to_its_request_alone(channel):
    bad = channel.send(channel.pack("INCR"))  # wrong number of arguments
    good = echo(channel, "fine")
    assert good.result() == b"fine"
    with pytest.raises(redis.exceptions.ResponseError):
        bad.result()


def test_a_broken_connection_fails_every_unread_request(throwaway_redis):
    pool = redis.ConnectionPool.from_url(throwaway_redis.url, socket_timeout=2)
    channel = Channel(pool.connection_class(**pool.connection_kwargs))
    assert echo(channel, "warm").result() == b"warm"
    throwaway_redis.stop()
    lost = [echo(channel, t) for t in ("a", "b")]
    for request in lost:
        with pytest.raises(redis.exceptions.ConnectionError):
            request.result()
    throwaway_redis.start()
    assert echo(channel, "back").result() == b"back"  # the channel reconnects


def create_with_a_nested_save(model) -> tuple[ShopOrder, ShopOrder]:
    """Create a ``model`` row (user 1) whose pre_save receiver first saves a ShopOrder (user 2).

    Returns (outer, inner).
    """
    ShopOrder.objects.create(user_id=0)  # the stream has a state: no recovery below
    inner: list[ShopOrder] = []

    def create_another(sender, instance, **kwargs):
        if not inner:
            inner.append(ShopOrder(user_id=2))  # marks the nesting as started
            inner[0].save()

    pre_save.connect(create_another, sender=model, dispatch_uid="test-nested-save")
    try:
        outer = model.objects.create(user_id=1)
    finally:
        pre_save.disconnect(sender=model, dispatch_uid="test-nested-save")
    return outer, inner[0]


def test_a_save_inside_a_pre_save_receiver_keeps_the_order_the_saves_started(redis_backend):
    """The outer save's reservation left first, so its number is the smaller one.

    Issued in pre_save() of the field instead, the inner save would finish first and
    take the smaller number; read in the wrong order, the replies would swap.
    """
    outer, inner = create_with_a_nested_save(ShopOrder)
    assert outer.number < inner.number
    assert outer.number % 16 == 1 and inner.number % 16 == 2
    assert {outer.number, inner.number} <= set(ShopOrder.objects.values_list("number", flat=True))


def create_refused_by_a_receiver() -> None:
    """Try to create a ShopOrder (user 1) that a pre_save receiver refuses."""

    def refuse(sender, instance, **kwargs):
        raise RuntimeError("refused by a receiver")

    pre_save.connect(refuse, sender=ShopOrder, dispatch_uid="test-refuse")
    try:
        with pytest.raises(RuntimeError), transaction.atomic():
            ShopOrder.objects.create(user_id=1)
    finally:
        pre_save.disconnect(sender=ShopOrder, dispatch_uid="test-refuse")


def test_a_save_that_fails_before_its_insert_leaves_a_gap(redis_backend):
    field = ShopOrder._meta.get_field("number")
    before = ShopOrder.objects.create(user_id=1)

    create_refused_by_a_receiver()
    # The abandoned reservation was made: the store moved past it.
    abandoned = get_store().read(field.stream)
    assert abandoned is not None and abandoned > field.format.position(before.number)
    # A different command on the same connection reads its own reply, not the one left
    # unread (raise_to answers five values, a reservation four).
    assert get_store().raise_to(field.stream, (0, 0))[1] == abandoned
    after = ShopOrder.objects.create(user_id=1)
    assert field.format.position(after.number) > abandoned
    assert ShopOrder.objects.count() == 2


def test_an_instance_saved_again_after_a_failure_takes_a_fresh_number(redis_backend):
    field = ShopOrder._meta.get_field("number")
    first = ShopOrder.objects.create(user_id=5)  # the stream has a state: no recovery below
    order = ShopOrder(user_id=5)
    refusals = [1]

    def refuse_once(sender, instance, **kwargs):
        if refusals:
            refusals.pop()
            raise RuntimeError("refused once")

    pre_save.connect(refuse_once, sender=ShopOrder, dispatch_uid="test-refuse-once")
    try:
        with pytest.raises(RuntimeError), transaction.atomic():
            order.save()
        abandoned = get_store().read(field.stream)
        order.save()
    finally:
        pre_save.disconnect(sender=ShopOrder, dispatch_uid="test-refuse-once")
    assert abandoned > field.format.position(first.number)
    assert field.format.position(order.number) > abandoned
    assert ShopOrder.objects.get(pk=order.pk).number == order.number


@pytest.mark.parametrize("model", [RushOrder, GiftOrder], ids=["proxy", "multi-table child"])
def test_proxies_and_multi_table_children_send_ahead_too(redis_backend, model):
    """The signal names the proxy or the child; the number is the parent's field."""
    outer, inner = create_with_a_nested_save(model)
    assert outer.number < inner.number
    assert outer.number % 16 == 1
    assert ShopOrder.objects.get(pk=outer.pk).number == outer.number


def test_with_send_ahead_off_the_number_is_reserved_at_the_insert(redis_backend, settings):
    """SNOWID_ORDER_SEND_AHEAD=False: nothing leaves when save() starts.

    A save refused before its INSERT leaves no gap, and a save nested in a pre_save
    receiver reaches its INSERT first, so it takes the smaller number.
    """
    settings.SNOWID_ORDER_SEND_AHEAD = False
    field = ShopOrder._meta.get_field("number")
    outer, inner = create_with_a_nested_save(ShopOrder)
    assert inner.number < outer.number
    before = get_store().read(field.stream)
    assert before == field.format.position(outer.number)

    create_refused_by_a_receiver()
    assert get_store().read(field.stream) == before
