"""OrderNumberField against a real Redis and real databases."""

from __future__ import annotations

import contextlib
import time
from datetime import datetime, timedelta, timezone

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Max
from django.test import override_settings

from django_snowid.core.order_format import OrderNumberFormat
from django_snowid.exceptions import (
    InvalidShardValue,
    OrderClockBehind,
    OrderNumberError,
    OrderNumberUnavailable,
    OrderSecondFull,
)
from django_snowid.fields import OrderNumberField
from django_snowid.orders.stores import get_store
from tests.support import MS, forget, free_port, redis_caches, set_order_state
from tests.testapp.models import DecimalOrder, ShopOrder, TinyOrder

pytestmark = pytest.mark.django_db


def failing_create(model, **values):
    """create() in a savepoint of its own: an exception inside save() marks the
    surrounding transaction for rollback, as Django does for any error there."""
    with transaction.atomic():
        return model.objects.create(**values)


def field_of(model) -> OrderNumberField:
    return model._meta.get_field("number")


def position_now(fmt) -> int:
    return fmt.local_second(datetime.now(timezone.utc))


def test_save_fills_a_readable_shard_routed_number(backend):
    before = datetime.now(timezone.utc).replace(microsecond=0)
    order = ShopOrder.objects.create(user_id=1820)
    decoded = field_of(ShopOrder).decode(order.number)
    # A new stream resumes at the second after its store's clock (see Recovery).
    assert before < decoded.time <= datetime.now(timezone.utc) + timedelta(seconds=1)
    assert order.number % 16 == 1820 % 16 == decoded.shard
    assert field_of(ShopOrder).shard_of(order.number) == 12
    assert decoded.sequence >= 1
    assert ShopOrder.objects.get(pk=order.pk).number == order.number


def test_numbers_increase_and_never_repeat(backend):
    numbers = [ShopOrder.objects.create(user_id=i).number for i in range(60)]
    positions = [field_of(ShopOrder).format.position(n) for n in numbers]
    assert positions == sorted(set(positions))
    assert len(set(numbers)) == 60


def test_decimal_packing(backend):
    before = datetime.now(timezone.utc).replace(microsecond=0)
    order = DecimalOrder.objects.create(user_id=4207)
    after = datetime.now(timezone.utc)
    text = str(order.number).zfill(19)
    stem = field_of(DecimalOrder).decode(order.number).time
    assert text[:12] == stem.strftime("%y%m%d%H%M%S")  # the digits start with the stem
    # now, or the second after it (a new stream resumes at the next second)
    assert before <= stem <= after + timedelta(seconds=1)
    assert order.number % 100 == 7
    assert field_of(DecimalOrder).decode(order.number).shard == 7


def test_streams_are_independent(backend):
    store = get_store()
    shop, decimal = field_of(ShopOrder), field_of(DecimalOrder)
    a = ShopOrder.objects.create(user_id=1)
    assert store.read(shop.stream) == shop.format.position(a.number)
    b = DecimalOrder.objects.create(user_id=1)
    # b moved its own stream only, whatever second it is
    assert store.read(shop.stream) == shop.format.position(a.number)
    assert store.read(decimal.stream) == decimal.format.position(b.number)
    c = ShopOrder.objects.create(user_id=1)
    assert store.read(decimal.stream) == decimal.format.position(b.number)
    assert shop.format.position(c.number) > shop.format.position(a.number)


def test_bulk_create_reserves_blocks(backend):
    objs = ShopOrder.objects.bulk_create([ShopOrder(user_id=i) for i in range(500)])
    numbers = [o.number for o in objs]
    assert None not in numbers and numbers == sorted(set(numbers))
    assert [n % 16 for n in numbers] == [i % 16 for i in range(500)]
    assert ShopOrder.objects.count() == 500


@pytest.mark.redis
def test_bulk_create_costs_one_round_trip_per_block(throwaway_redis):
    client = throwaway_redis.client()
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis"):
        ShopOrder.objects.create(user_id=1)  # recovery and script loading happen here
        client.config_resetstat()
        ShopOrder.objects.bulk_create([ShopOrder(user_id=i) for i in range(300)])
        calls = client.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)
    assert 1 <= calls <= 2  # 2 only if the block met the end of a second


def test_the_cap_moves_on_to_the_next_second_without_spilling(backend):
    fmt = field_of(TinyOrder).format
    assert fmt.max_sequence == 7
    # Start at the beginning of a second so that 7 + 3 saves straddle exactly one boundary.
    time.sleep(1 - time.time() % 1 + 0.01)
    orders = [TinyOrder.objects.create(user_id=13) for _ in range(10)]
    decoded = [fmt.decode(o.number) for o in orders]
    assert all(1 <= d.sequence <= 7 for d in decoded)
    assert all(d.shard == 13 for d in decoded)  # nothing spilled into the shard bits
    seconds = [d.time for d in decoded]
    assert seconds == sorted(seconds) and len(set(seconds)) >= 2
    assert seconds.count(seconds[0]) <= 7
    numbers = [o.number for o in orders]
    assert numbers == sorted(set(numbers))


def test_a_full_second_raises_when_told_to(backend, clock):
    # The store's clock is the test's: a whole second, 7 numbers in it (3 sequence bits).
    clock.ns = (clock.ns // 10**9 + 1) * 10**9 + 100 * MS
    field = field_of(TinyOrder)
    set_order_state(field.stream, (field.format.local_second(clock.now()) - 1, 7))
    with override_settings(SNOWID_ORDER_WHEN_FULL="raise"):
        get_store().clock = lambda: clock() / 10**9  # the store of these settings too
        for _ in range(7):
            TinyOrder.objects.create(user_id=1)
        count = TinyOrder.objects.count()
        clock.advance_ms(500)  # the same second
        with pytest.raises(OrderSecondFull, match="All 7 order numbers of this second"):
            failing_create(TinyOrder, user_id=1)
        assert TinyOrder.objects.count() == count
        clock.advance_ms(500)  # the next second has room again
        assert failing_create(TinyOrder, user_id=1).number


def test_clock_behind_continues_within_the_bound_and_refuses_beyond(backend):
    field = field_of(ShopOrder)
    fmt = field.format
    first = ShopOrder.objects.create(user_id=2)
    ahead = position_now(fmt) + 3  # as if the store's clock had stepped back 3 s
    set_order_state(field.stream, (ahead, 40))
    after = ShopOrder.objects.create(user_id=2)
    assert after.number > first.number
    assert fmt.position(after.number) == (ahead, 41)

    set_order_state(field.stream, (position_now(fmt) + 60, 1))
    count = ShopOrder.objects.count()
    with pytest.raises(OrderClockBehind, match="behind the last number"):
        failing_create(ShopOrder, user_id=2)
    assert ShopOrder.objects.count() == count


def test_missing_state_is_recovered_from_the_database_first(backend):
    field = field_of(ShopOrder)
    fmt = field.format
    # A number issued "in the future" (a store whose clock ran ahead), then the store forgets.
    future = fmt.compose(position_now(fmt) + 2, 900, 5)
    ShopOrder.objects.create(user_id=5, number=future)
    forget(field.stream)
    order = ShopOrder.objects.create(user_id=5)
    assert order.number > future
    assert get_store().read(field.stream) == fmt.position(order.number)


@pytest.mark.redis
def test_switching_the_store_back_and_forth_never_runs_ahead_of_the_clock(clock):
    """Processes of both stores taking turns (a setting switched back and forth, jobs run
    with other settings): each first number of a process checks the store against the
    database. The stream continues past the other store's numbers; it is not pushed a
    second further ahead of the clock at each turn (which ends in OrderClockBehind)."""
    field = field_of(ShopOrder)
    fmt = field.format
    clock.ns = (clock.ns // 10**9) * 10**9 + 100 * MS
    leads = []
    for turn in range(16):  # far more turns than SNOWID_ORDER_MAX_BACKWARDS_S allows seconds
        with override_settings(SNOWID_ORDER_BACKEND=("database", "redis")[turn % 2]):
            get_store().clock = lambda: clock() / 10**9  # both stores on the test's clock
            issuer = field.issuer()  # made afresh: the settings changed
            issuer.sleep = clock.sleep
            number = issuer.next_number(1)
            ShopOrder.objects.create(user_id=1, number=number)
        leads.append(fmt.position(number)[0] - fmt.local_second(clock.now()))
    numbers = list(ShopOrder.objects.order_by("pk").values_list("number", flat=True))
    assert numbers == sorted(set(numbers))
    assert max(leads) == max(leads[:2]), leads


def running(field: OrderNumberField) -> None:
    """This process issues numbers of the field's stream already: its issuer checked the
    store against the database before its first number (what a state planted afterwards,
    as a store losing writes would leave it, does not get)."""
    field.issuer()


def store_lost_a_write(sequence: int = 1) -> tuple[OrderNumberFormat, int, int]:
    """A number of user 9, two seconds ahead, that the database holds and the store "lost":
    its next numbers run into it. The format, that second and that number."""
    field = field_of(ShopOrder)
    running(field)
    second = position_now(field.format) + 2
    taken = field.format.compose(second, sequence, 9)
    ShopOrder.objects.create(user_id=9, number=taken)
    forget(field.stream)
    set_order_state(field.stream, (second, 0))
    return field.format, second, taken


def test_a_collision_is_retried_with_a_new_number(backend):
    fmt, second, _ = store_lost_a_write()
    field = field_of(ShopOrder)
    with transaction.atomic():  # inside a transaction the retry uses a savepoint
        order = ShopOrder.objects.create(user_id=9)
    # The conflict made the stream recover: it resumed after the database's largest
    # number, past anything the stale store may have handed out meanwhile.
    assert order.number == fmt.compose(second + 1, 1, 9)
    forget(field.stream)
    set_order_state(field.stream, (second, 0))
    order = ShopOrder.objects.create(user_id=9)  # autocommit: no savepoint needed
    assert fmt.position(order.number) == (second + 2, 1)


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@override_settings(SNOWID_ORDER_BACKEND="redis")  # a store that runs no SQL
def test_an_insert_runs_in_a_savepoint_only_inside_a_transaction():
    """In autocommit a failed INSERT leaves nothing behind: the row's INSERT runs alone,
    in no transaction. Inside one it runs in a savepoint, which a retry rolls back to."""
    ShopOrder.objects.create(user_id=1)  # the connection open, the stream recovered
    ran: list[tuple[str, bool]] = []

    def record(execute, sql, params, many, context):
        ran.append((sql.split()[0], connection.in_atomic_block))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        ShopOrder.objects.create(user_id=2)
        assert ran == [("INSERT", False)]
        with transaction.atomic():
            ran.clear()  # the transaction's own BEGIN on SQLite
            ShopOrder.objects.create(user_id=3)
        assert ran == [("SAVEPOINT", True), ("INSERT", True), ("RELEASE", True)]


@pytest.mark.django_db(transaction=True)
def test_a_collision_in_a_transaction_managed_by_hand_is_retried(backend):
    """Autocommit turned off by hand, outside atomic(): a failed INSERT must not abort the
    transaction (PostgreSQL's rule), so the retry needs a savepoint there too."""
    fmt, second, _ = store_lost_a_write()
    transaction.set_autocommit(False)
    try:
        order = ShopOrder.objects.create(user_id=9)
        transaction.commit()
    finally:
        transaction.rollback()
        transaction.set_autocommit(True)
    assert ShopOrder.objects.get(pk=order.pk).number == fmt.compose(second + 1, 1, 9)


@pytest.mark.parametrize("in_transaction", [False, True])
def test_bulk_create_recovers_and_writes_the_whole_set_again(backend, in_transaction):
    fmt, second, taken = store_lost_a_write(sequence=30)  # the next block runs into it
    with transaction.atomic() if in_transaction else contextlib.nullcontext():
        # Same shard as the taken number: the 30th number of the block is that number.
        objs = ShopOrder.objects.bulk_create(
            [ShopOrder(user_id=9 + 16 * i) for i in range(100)], batch_size=40
        )
    numbers = [o.number for o in objs]
    assert numbers == sorted(set(numbers)) and taken not in numbers
    assert fmt.position(numbers[0]) > (second, 30)  # recovered past the database's largest
    stored = set(ShopOrder.objects.values_list("number", flat=True))
    assert stored == {taken, *numbers}  # no row of the first try was left behind


def test_bulk_create_that_fails_otherwise_writes_nothing(backend):
    objs = [ShopOrder(user_id=i) for i in range(50)] + [ShopOrder(user_id=None)]
    with pytest.raises(InvalidShardValue):
        failing_bulk_create(objs)
    ShopOrder.objects.create(user_id=1, pk=10**12)
    objs = [ShopOrder(user_id=i) for i in range(50)] + [ShopOrder(user_id=1, pk=10**12)]
    with pytest.raises(IntegrityError):  # not an order number: not ours to retry
        failing_bulk_create(objs, batch_size=10)
    assert ShopOrder.objects.count() == 1


def failing_bulk_create(objs, **options):
    with transaction.atomic():
        return ShopOrder.objects.bulk_create(objs, **options)


@override_settings(SNOWID_ORDER_INSERT_RETRIES=0)
def test_retries_are_bounded(backend):
    store_lost_a_write()
    with pytest.raises(IntegrityError):
        failing_create(ShopOrder, user_id=9)


@pytest.mark.parametrize("user_id", [None, -1])
def test_bad_shard_values_write_nothing(backend, user_id):
    with pytest.raises(InvalidShardValue, match="user_id"):
        failing_create(ShopOrder, user_id=user_id)
    assert ShopOrder.objects.count() == 0


@pytest.mark.parametrize("user_id", [None, -1, True, "7", 2.0])
def test_a_bad_shard_value_in_a_bulk_writes_nothing(backend, user_id):
    objs = [ShopOrder(user_id=i) for i in range(20)] + [ShopOrder(user_id=user_id)]
    with pytest.raises(InvalidShardValue, match=r"ShopOrder\.user_id is"):
        ShopOrder.objects.bulk_create(objs)
    assert ShopOrder.objects.count() == 0 and all(o.number is None for o in objs)


@pytest.mark.redis
def test_unreachable_redis_writes_nothing():
    with override_settings(
        CACHES=redis_caches(f"redis://127.0.0.1:{free_port()}/0"), SNOWID_ORDER_BACKEND="redis"
    ):
        with pytest.raises(OrderNumberUnavailable, match="unreachable"):
            failing_create(ShopOrder, user_id=1)
        with pytest.raises(OrderNumberUnavailable), transaction.atomic():
            ShopOrder.objects.bulk_create([ShopOrder(user_id=1)])
    assert ShopOrder.objects.count() == 0


@pytest.mark.redis
@pytest.mark.parametrize("disaster", ["restart", "flushall"])
def test_redis_restart_or_flush_mid_stream_repeats_nothing(throwaway_redis, disaster):
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis"):
        numbers = [ShopOrder.objects.create(user_id=3).number for _ in range(5)]
        if disaster == "restart":
            throwaway_redis.restart()
        else:
            throwaway_redis.client().flushall()
        numbers += [ShopOrder.objects.create(user_id=3).number for _ in range(5)]
    assert numbers == sorted(set(numbers))
    stored = set(ShopOrder.objects.values_list("number", flat=True))
    assert stored == set(numbers)


@pytest.mark.redis
def test_garbage_in_the_key_is_a_clear_error(throwaway_redis):
    field = field_of(ShopOrder)
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis"):
        key = get_store().key(field.stream)
        throwaway_redis.client().set(key, "garbage")
        with pytest.raises(OrderNumberError, match=f"order-number key '{key}'"):
            failing_create(ShopOrder, user_id=1)
        throwaway_redis.client().delete(key)
        throwaway_redis.client().hset(key, mapping={"sec": "x", "seq": "1"})
        # Found when the process checks the store before its first number ...
        with pytest.raises(OrderNumberError, match="does not hold an order-number state"):
            failing_create(ShopOrder, user_id=1)
        throwaway_redis.client().delete(key)
        running(field)
        throwaway_redis.client().hset(key, mapping={"sec": "x", "seq": "1"})
        # ... and by a process that issues numbers already.
        with pytest.raises(OrderNumberError, match="does not hold an order-number state"):
            failing_create(ShopOrder, user_id=1)
        assert throwaway_redis.client().hget(key, "sec") == b"x"  # left for a person to see
    assert ShopOrder.objects.count() == 0


def test_store_matches_the_table(backend):
    ShopOrder.objects.bulk_create([ShopOrder(user_id=i) for i in range(20)])
    ShopOrder.objects.create(user_id=1)
    largest = ShopOrder.objects.aggregate(m=Max("number"))["m"]
    field = field_of(ShopOrder)
    assert get_store().read(field.stream) == field.format.position(largest)


def test_random_start_hides_the_volume(backend):
    """Each time the stream starts a second afresh (here: after a recovery), its first
    sequence is random in 1..N+1."""
    field = field_of(ShopOrder)
    firsts = []
    with override_settings(SNOWID_ORDER_RANDOM_START=5000):
        for _ in range(4):
            forget(field.stream)
            firsts.append(field.decode(ShopOrder.objects.create(user_id=1).number).sequence)
    assert all(1 <= s <= 5001 for s in firsts)
    # Without the random start all four would be 1; with it, four equal draws out of
    # 5,001 values happen once in about 10**11 runs.
    assert len(set(firsts)) > 1, firsts


def test_dst_zone_is_a_check_error_unless_allowed():
    from django.core import checks

    with override_settings(SNOWID_ORDER_ZONE="Europe/Paris"):
        ids = [m.id for m in checks.run_checks(databases=[])]
        assert "django_snowid.E203" in ids
        with override_settings(SNOWID_ORDER_ALLOW_DST=True):
            assert "django_snowid.E203" not in [m.id for m in checks.run_checks(databases=[])]


def test_datetime_of_numbers_is_aware_utc():
    fmt = field_of(ShopOrder).format
    number = fmt.compose(fmt.local_second(datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc)), 1)
    assert fmt.decode(number).time == datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert fmt.decode(number).time - datetime(2030, 1, 2, tzinfo=timezone.utc) == timedelta(
        hours=3, minutes=4, seconds=5
    )


@pytest.mark.django_db(transaction=True)
def test_a_conflict_with_a_row_committed_after_the_snapshot(backend, settings):
    """Under REPEATABLE READ or SERIALIZABLE the transaction's snapshot cannot see the row
    its INSERT ran into: the retry is decided by the error, never by a read."""
    import threading

    from django.db import connection, connections

    from django_snowid.exceptions import OrderTransactionConflict

    if connection.vendor == "sqlite":
        pytest.skip("SQLite: the other writer would wait for this transaction to end")
    field = field_of(ShopOrder)
    fmt = field.format
    second = position_now(fmt) + 2
    ShopOrder.objects.create(user_id=9)  # the stream exists
    taken = fmt.compose(second, 1, 9)

    def commit_elsewhere() -> None:
        try:
            ShopOrder.objects.create(user_id=9, number=taken)
        finally:
            connections.close_all()

    number = None
    try:
        with transaction.atomic():
            assert ShopOrder.objects.count() == 1  # the snapshot is taken here
            thread = threading.Thread(target=commit_elsewhere)
            thread.start()
            thread.join()
            forget(field.stream)  # the store "lost" that number: it hands it out again
            set_order_state(field.stream, (second, 0))
            number = ShopOrder.objects.create(user_id=9).number
    except OrderTransactionConflict:
        # PostgreSQL reports such a conflict under SERIALIZABLE as a serialization failure:
        # the transaction must run again, as the error says.
        assert connection.vendor == "postgresql" and settings.ISOLATION == "serializable"
        return
    assert number is not None and fmt.position(number) > (second, 1)
    assert ShopOrder.objects.filter(number=taken).count() == 1
