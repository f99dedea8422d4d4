"""Blocks of order numbers: one store call reserves numbers of the current second for one
process (``SNOWID_ORDER_BLOCK_MAX``), the store's state past all of them at once."""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

import pytest
import redis
from django.conf import settings
from django.db import transaction
from django.test import override_settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings

from django_snowid.core.order_blocks import BLOCK_SHARE, Block, BlockSizer, grant
from django_snowid.core.order_stream import reserve_block
from django_snowid.exceptions import OrderSecondFull
from django_snowid.orders.issuer import StreamIssuer, get_issuer
from django_snowid.orders.stores import get_store
from django_snowid.orders.stores.redis import RESERVE_BLOCK, block_outcome
from django_snowid.stores.redis_scripts import server_id
from tests.order_cases import core_reserve, reservations, script_argv
from tests.support import MS, FakeClock, set_order_state
from tests.testapp.models import DecimalOrder, ShopOrder

# ---------------------------------------------------------------------------- pure core


def test_a_block_takes_at_most_a_share_of_the_rest_and_one_near_the_end():
    assert grant(16_383, 1024) == 1024
    assert grant(8 * 100, 1024) == 100
    assert grant(BLOCK_SHARE - 1, 1024) == 1  # close to full: single numbers
    assert grant(1, 5) == 1
    assert grant(0, 5) == 0


def test_the_size_grows_when_a_block_runs_out_within_its_second_and_shrinks_on_gaps():
    sizer = BlockSizer(16)
    assert sizer.wanted(900) == 1  # the first call takes one number
    for expected in (2, 4, 8, 16, 16):
        block = Block(100, 1, sizer.wanted(900), 900)
        sizer.ended(block, block.count, ran_out=True, now_second=100)
        assert sizer.size == expected  # capped by the maximum
    block = Block(100, 1, 16, 900)
    sizer.ended(block, 3, ran_out=False, now_second=101)  # 13 numbers abandoned
    assert sizer.size == 8


def test_a_quiet_process_takes_one_number_a_call():
    sizer = BlockSizer(1024)
    for second in range(0, 600, 60):  # one number a minute
        assert sizer.wanted(500) == 1
        sizer.ended(Block(second, 1, 1, 500), 1, ran_out=True, now_second=second + 60)
    assert sizer.size == 1


def test_the_rate_caps_a_block_by_what_is_left_of_the_second():
    sizer = BlockSizer(1024)
    sizer.size = 1024
    sizer.ended(Block(100, 1, 1024, 900), 100, ran_out=False, now_second=101)
    sizer.ended(Block(101, 1, 10, 900), 10, ran_out=False, now_second=102)
    assert sizer.rate == 100  # what second 100 used
    assert sizer.wanted(100) == 10  # 100 a second, 100 ms left
    assert BlockSizer(1).wanted(1000) == 1
    with pytest.raises(ValueError, match="at least 1"):
        BlockSizer(0)


# ------------------------------------------------------- the Redis script and the core

property_settings = hypothesis_settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.mark.redis
@property_settings
@given(case=reservations())
def test_reserve_block_script_agrees_with_core(case):
    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=3)
    key = f"{{{settings.SNOWID_REDIS_KEY_PREFIX}:order:blocks}}"
    client.delete(key)
    client.hset(
        key, mapping={"sec": case["last"][0], "seq": case["last"][1], "rid": server_id(client, key)}
    )
    reply = RESERVE_BLOCK(client, (key,), script_argv(case))
    state, outcome = core_reserve(case, reserve_block)
    second, sequence = client.hmget(key, ["sec", "seq"])
    assert (block_outcome(reply), (int(second), int(sequence))) == (outcome, state)
    client.delete(key)


# ------------------------------------------------------------ the issuer, on both stores


def _on_clock(issuer: StreamIssuer, clock: FakeClock) -> None:
    """The store, the blocks and the waits of ``issuer`` on the test's clock."""
    issuer._store.clock = lambda: clock() / 10**9  # type: ignore[attr-defined]
    assert issuer._blocks is not None
    issuer._blocks.monotonic = issuer._blocks.wall = lambda: clock() / 10**9
    issuer.sleep = clock.sleep


def _issuer(clock: FakeClock) -> StreamIssuer:
    """The issuer of ShopOrder numbers, its stream just behind the test's clock."""
    field = ShopOrder._meta.get_field("number")
    get_store().clock = lambda: clock() / 10**9  # type: ignore[attr-defined]
    set_order_state(field.stream, (field.format.local_second(clock.now()) - 1, 0))
    issuer = get_issuer(field.stream, field.format)
    _on_clock(issuer, clock)
    return issuer


# A second of 2**10 numbers: as telling as the default 2**14, in a sixteenth of the calls.
FILL_BITS = 10


def _fill_a_second(clock: FakeClock, block_max: int) -> tuple[int, int]:
    """Numbers issued in one second of a ``FILL_BITS`` stream until OrderSecondFull, and
    the store calls made."""
    field = ShopOrder._meta.get_field("number")
    fmt = dataclasses.replace(field.format, sequence_bits=FILL_BITS)
    with override_settings(SNOWID_ORDER_WHEN_FULL="raise", SNOWID_ORDER_BLOCK_MAX=block_max):
        store = get_store()
        store.clock = lambda: clock() / 10**9  # type: ignore[attr-defined]
        set_order_state(field.stream, (fmt.local_second(clock.now()) - 1, 0))
        issuer = get_issuer(field.stream, fmt)
        if block_max > 1:
            _on_clock(issuer, clock)
        calls = 0
        reserve_block, reserve = store.reserve_block, store.reserve

        def counted(method: Any) -> Any:
            def call(*args: Any) -> Any:
                nonlocal calls
                calls += 1
                return method(*args)

            return call

        store.reserve_block, store.reserve = counted(reserve_block), counted(reserve)  # type: ignore[method-assign]
        numbers = []
        with pytest.raises(OrderSecondFull, match="of this second"):
            while True:
                numbers.append(issuer.next_number(1))
                clock.advance_ms(0.01)
        positions = [fmt.position(n) for n in numbers]
        assert positions == sorted(set(positions))
        assert {second for second, _ in positions} == {fmt.local_second(clock.now())}
        return len(numbers), calls


@pytest.mark.django_db(transaction=True)
def test_a_second_that_fills_up_refuses_exactly_where_one_number_a_call_does(backend, clock):
    """Blocks grow, then shrink to single numbers as the second fills up: OrderSecondFull
    comes after as many numbers as one number a call gives, in far fewer store calls."""
    clock.ns = (clock.ns // 10**9 + 1) * 10**9 + 100 * MS
    with_blocks, block_calls = _fill_a_second(clock, 1024)
    clock.ns = (clock.ns // 10**9 + 2) * 10**9 + 100 * MS
    one_a_call, calls = _fill_a_second(clock, 1)
    assert with_blocks == one_a_call == (1 << FILL_BITS) - 1
    assert block_calls < calls / 15


@pytest.mark.django_db(transaction=True)
def test_a_quiet_process_takes_one_number_a_call_from_its_store(backend, clock):
    field = ShopOrder._meta.get_field("number")
    issuer = _issuer(clock)
    for _ in range(5):
        clock.advance_ms(60_000)  # one number a minute
        number = issuer.next_number(1)
        assert issuer._store.read(field.stream) == field.format.position(number)
        assert issuer.block_size() == 1


@pytest.mark.django_db(transaction=True)
def test_bulks_draw_from_the_process_blocks(backend, clock):
    """Back to back, bulks of 100 take their numbers from this process's blocks: once the
    blocks have grown, most bulks make no store call; their numbers keep increasing."""
    clock.ns = (clock.ns // 10**9 + 1) * 10**9 + 100 * MS
    issuer = _issuer(clock)
    store = issuer._store
    calls: list[str] = []
    for name in ("reserve", "reserve_block"):
        setattr(store, name, _counted(getattr(store, name), name, calls))
    fmt = ShopOrder._meta.get_field("number").format
    positions = []
    for bulk in range(30):
        if bulk == 20:
            calls.clear()  # the blocks have grown
        positions += [fmt.position(n) for n in issuer.next_numbers(list(range(100)))]
        clock.advance_ms(1)
    positions.append(fmt.position(issuer.next_number(7)))
    assert positions == sorted(set(positions))
    assert {second for second, _ in positions} == {fmt.local_second(clock.now())}
    assert len(calls) <= 2, calls  # one store call a bulk before
    assert store.read(ShopOrder._meta.get_field("number").stream) >= positions[-1]


def _counted(method: Any, name: str, calls: list[str]) -> Any:
    def call(*args: Any) -> Any:
        calls.append(name)
        return method(*args)

    return call


@pytest.mark.django_db(transaction=True)
def test_a_block_ends_with_its_second(backend, clock):
    """Numbers left in a block when its second ends are abandoned, never issued later."""
    clock.ns = (clock.ns // 10**9 + 1) * 10**9 + 100 * MS
    field = ShopOrder._meta.get_field("number")
    issuer = _issuer(clock)
    first = [field.format.position(issuer.next_number(1)) for _ in range(100)]
    blocks = issuer._blocks
    assert blocks is not None and blocks.size > 1
    held = issuer._store.read(field.stream)
    assert held > first[-1]  # the store is past the whole block
    clock.advance_ms(950)  # the next second
    later = field.format.position(issuer.next_number(1))
    assert later[0] == first[-1][0] + 1
    assert blocks.abandoned == held[1] - first[-1][1]


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_flushed_store_never_reissues_a_block_in_flight(throwaway_redis, clock):
    """A process keeps handing out its block after FLUSHALL; another one recovers the
    stream and issues past the whole block, used or not."""
    clock.ns = (clock.ns // 10**9 + 1) * 10**9 + 100 * MS
    field = ShopOrder._meta.get_field("number")
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis"):
        holder = _issuer(clock)
        issued = [holder.next_number(1) for _ in range(200)]
        ShopOrder.objects.bulk_create([ShopOrder(user_id=1, number=n) for n in issued])
        throwaway_redis.client().flushall()
        other = StreamIssuer(field.stream, field.format)  # another process's
        _on_clock(other, clock)
        theirs = [other.next_number(2) for _ in range(50)]
        issued += [holder.next_number(1) for _ in range(50)]
    ours = {field.format.position(n) for n in issued}
    assert len(ours) == len(issued)
    assert not ours & {field.format.position(n) for n in theirs}


@pytest.mark.django_db(transaction=True)
def test_blocks_taken_their_numbers_and_the_abandoned_ones_are_counted(backend, clock):
    from tests.metrics.test_metrics import sample

    clock.ns = (clock.ns // 10**9 + 1) * 10**9 + 100 * MS
    field = ShopOrder._meta.get_field("number")
    labels = {"stream": field.stream, "store": backend}
    names = ("order_blocks", "order_block_numbers", "order_numbers_abandoned")
    before = [sample(f"snowid_{name}_total", **labels) for name in names]
    issuer = _issuer(clock)
    for _ in range(100):
        issuer.next_number(1)
    held = issuer._store.read(field.stream)
    clock.advance_ms(950)  # the next second: the rest of the block is abandoned
    issuer.next_number(1)
    blocks, numbers, abandoned = (
        sample(f"snowid_{name}_total", **labels) - was
        for name, was in zip(names, before, strict=True)
    )
    assert blocks < 100
    assert held[1] == 100 + abandoned  # the first second's numbers: used or abandoned
    assert abandoned > 0 and numbers > 100 + abandoned  # and the next second's block


@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_the_database_store_reserves_one_number_a_call(clock, settings):
    """A block's UPDATE that a rollback could undo is never held: inside a transaction the
    process finishes the block it reserved in autocommit (committed), then reserves one
    number a call."""
    from django.db import transaction

    settings.SNOWID_ORDER_BACKEND = "database"
    clock.ns = (clock.ns // 10**9 + 1) * 10**9 + 100 * MS
    field = ShopOrder._meta.get_field("number")
    issuer = _issuer(clock)
    before = [field.format.position(issuer.next_number(1)) for _ in range(100)]
    blocks = issuer._blocks
    assert blocks is not None and blocks.blocks < 100
    taken, held = blocks.blocks, issuer._store.read(field.stream)
    with transaction.atomic():
        inside = [field.format.position(issuer.next_number(1)) for _ in range(200)]
        state = issuer._store.read(field.stream)
        transaction.set_rollback(True)
    assert blocks.blocks == taken  # no block reserved inside
    assert inside == sorted(set(inside)) and inside[0] > before[-1]
    assert inside[: held[1] - before[-1][1]] == [
        (held[0], s) for s in range(before[-1][1] + 1, held[1] + 1)
    ]
    assert state == inside[-1]  # one number a call past the block: the store at the last


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_forked_child_drops_its_parents_block(throwaway_redis):
    """The parent's block is the parent's to hand out: a forked child reserves its own."""
    from tests.support import in_child

    field = ShopOrder._meta.get_field("number")
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis"):
        issuer = get_issuer(field.stream, field.format)
        issuer.next_number(1)  # waits for the recovered second
        while True:  # a block with numbers left, far from the end of its second
            parent = [field.format.position(issuer.next_number(1)) for _ in range(64)]
            held = issuer._store.read(field.stream)
            if held[0] == parent[-1][0] and held > parent[-1]:
                break
        child = in_child(lambda: field.format.position(issuer.next_number(1)))
        after = field.format.position(issuer.next_number(1))
    assert child.startswith("ok:"), child
    assert ast.literal_eval(child[3:]) > held  # past everything the parent reserved
    assert after > parent[-1]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["plain", "concealed", "check digit"])
def test_numbers_after_a_bulk_reservation_come_after_it(backend, clock, settings, kind):
    """A process holding a block reserves 20 numbers at once (``bulk_create``): the rest
    of its block is below them and must be dropped, whatever the format, so that the
    numbers the process hands out next come after the bulk's."""
    settings.SNOWID_ORDER_CONCEAL = kind == "concealed"
    settings.SNOWID_ORDER_KEY = "a-key-for-the-bulk-reservation-test-0123456789"
    settings.SNOWID_ORDER_CHECK_DIGIT = "damm" if kind == "check digit" else None
    settings.SNOWID_ORDER_SEQUENCE_DIGITS = 4
    model = DecimalOrder if kind == "check digit" else ShopOrder
    field = model._meta.get_field("number")
    assert (field.format.cipher is not None, field.format.check_digit is not None) == (
        kind == "concealed",
        kind == "check digit",
    )
    clock.ns = (clock.ns // 10**9 + 1) * 10**9 + 100 * MS
    get_store().clock = lambda: clock() / 10**9  # type: ignore[attr-defined]
    set_order_state(field.stream, (field.format.local_second(clock.now()) - 1, 0))
    issuer = get_issuer(field.stream, field.format)
    _on_clock(issuer, clock)
    singles = [field.format.position(issuer.next_number(1)) for _ in range(40)]
    assert issuer._store.read(field.stream) > singles[-1]  # a block with numbers left
    bulk = [field.format.position(n) for n in issuer.next_numbers([1] * 20)]
    after = [field.format.position(issuer.next_number(1)) for _ in range(5)]
    assert min(after) > max(bulk) > max(singles), (singles[-1], bulk, after)


@pytest.mark.django_db(transaction=True)
def test_a_bulk_in_a_transaction_comes_after_the_block_held_before(clock, database_orders):
    """The database store holds no block inside a transaction: a bulk there reserves its
    numbers apart, and the block the process held from before must not be handed out
    after them."""
    clock.ns = (clock.ns // 10**9 + 1) * 10**9 + 100 * MS
    issuer = _issuer(clock)
    fmt = ShopOrder._meta.get_field("number").format
    singles = [fmt.position(issuer.next_number(1)) for _ in range(40)]
    assert issuer._store.read(ShopOrder._meta.get_field("number").stream) > singles[-1]
    with transaction.atomic():
        bulk = [fmt.position(n) for n in issuer.next_numbers([1] * 20)]
    after = [fmt.position(issuer.next_number(1)) for _ in range(5)]
    assert min(after) > max(bulk) > max(singles), (singles[-1], bulk, after)
