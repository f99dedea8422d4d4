from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from django_snowid.core.order_format import OrderNumberFormat, zone_has_dst
from django_snowid.core.order_stream import ClockBehind, Reserved, SecondFull, reserve
from django_snowid.exceptions import InvalidId, LayoutError

BINARY = OrderNumberFormat()
DECIMAL = OrderNumberFormat(packing="decimal")


def stem_at(fmt: OrderNumberFormat, moment: datetime) -> int:
    """The stem ``fmt`` writes for ``moment`` (yyMMddHHmmss on its zone's wall clock)."""
    return fmt.stem_of_local_second(fmt.local_second(moment))


UTC = timezone.utc


def test_binary_packing_by_hand():
    moment = datetime(2025, 4, 13, 12, 0, 0, tzinfo=UTC)
    second = BINARY.local_second(moment)
    number = BINARY.compose(second, 1, 1820 % 16)
    assert number == (250413120000 << 18) | (1 << 4) | 12
    assert number % 16 == 1820 % 16 == 12
    decoded = BINARY.decode(number)
    assert (decoded.stem, decoded.sequence, decoded.shard) == (250413120000, 1, 12)
    assert decoded.time == moment


def test_decimal_packing_reads_as_the_date():
    moment = datetime(2025, 4, 13, 12, 0, 0, tzinfo=UTC)
    number = DECIMAL.compose(DECIMAL.local_second(moment), 1, 7)
    assert str(number) == "250413120000" + "00001" + "07"
    decoded = DECIMAL.decode(number)
    assert (decoded.sequence, decoded.shard) == (1, 7)
    assert decoded.as_dict()["stem"] == "250413120000"


def test_hours_are_24_hour_clock():
    one_am = stem_at(BINARY, datetime(2025, 1, 1, 1, 0, tzinfo=UTC))
    one_pm = stem_at(BINARY, datetime(2025, 1, 1, 13, 0, tzinfo=UTC))
    assert one_am == 250101010000 and one_pm == 250101130000


def test_stem_in_a_fixed_zone():
    tokyo = OrderNumberFormat(zone="Asia/Tokyo")
    assert stem_at(tokyo, datetime(2025, 1, 1, 23, 30, tzinfo=UTC)) == 250102083000
    assert tokyo.decode(
        tokyo.compose(tokyo.local_second(datetime(2025, 1, 1, tzinfo=UTC)), 1)
    ).time == (datetime(2025, 1, 1, tzinfo=UTC))


def test_capacity():
    assert BINARY.max_sequence == 16_383 and BINARY.shard_count == 16
    assert DECIMAL.max_sequence == 99_999 and DECIMAL.shard_count == 100
    assert OrderNumberFormat(sequence_bits=3).max_sequence == 7


@pytest.mark.parametrize(
    "options, message",
    [
        ({"sequence_bits": 20, "shard_bits": 4}, "64 bits; at most 63"),
        ({"packing": "decimal", "sequence_digits": 6}, "does not fit 19 digits"),
        ({"packing": "decimal", "sequence_digits": 4, "shard_digits": 3}, None),
        ({"packing": "octal"}, "packing must be"),
        ({"zone": "Mars/Olympus"}, "Unknown time zone"),
        ({"sequence_bits": 0}, "sequence_bits must be an integer >= 1"),
    ],
)
def test_widths_are_checked(options, message):
    if message is None:
        OrderNumberFormat(**options)  # 12 + 4 + 3 digits: fits until 2092
    else:
        with pytest.raises(LayoutError, match=message):
            OrderNumberFormat(**options)


def test_decimal_widths_fit_until_2090():
    fmt = OrderNumberFormat(packing="decimal", sequence_digits=5, shard_digits=2)
    last = fmt.compose(fmt.local_second(datetime(2090, 12, 31, 23, 59, 59, tzinfo=UTC)), 99_999, 99)
    assert last <= 2**63 - 1


@pytest.mark.parametrize("bad", ["abc", "-5", 0, 2**63, "١٢٣", 12.5])
def test_decode_refuses_non_numbers(bad):
    with pytest.raises(InvalidId):
        BINARY.decode(bad)


def test_decode_refuses_impossible_dates():
    with pytest.raises(InvalidId, match="not a yyMMddHHmmss"):
        DECIMAL.decode(2513991200000000107)  # month 13... day 99


def test_zone_has_dst():
    assert zone_has_dst("Europe/Paris") and not zone_has_dst("UTC")
    assert not zone_has_dst("Asia/Tokyo")


#: Instants from 2000 to 2090, as aware UTC datetimes.
moments = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2090, 12, 31), timezones=st.just(UTC)
)


@given(
    moment=moments,
    sequence=st.integers(1, 16_383),
    uid=st.integers(0, 2**62),
)
def test_binary_round_trip_and_routing(moment, sequence, uid):
    shard = BINARY.shard_of_user(uid)
    number = BINARY.compose(BINARY.local_second(moment), sequence, shard)
    assert 0 < number < 2**63
    assert number % 16 == uid % 16
    decoded = BINARY.decode(number)
    assert decoded.time == moment.replace(microsecond=0)
    assert (decoded.sequence, decoded.shard) == (sequence, shard)
    assert BINARY.position(number) == (BINARY.local_second(moment), sequence)


@given(
    moment=moments,
    sequence=st.integers(1, 99_999),
    uid=st.integers(0, 2**62),
)
def test_decimal_round_trip_and_routing(moment, sequence, uid):
    number = DECIMAL.compose(DECIMAL.local_second(moment), sequence, DECIMAL.shard_of_user(uid))
    assert number % 100 == uid % 100
    assert str(number).zfill(19).startswith(moment.strftime("%y%m%d%H%M%S"))
    assert DECIMAL.decode(number).sequence == sequence


# Stems are yyMMdd...: they order correctly within 2000-2099 (and wrap in 2100).
CENTURY = st.integers(946_684_800, 4_102_444_799)


@given(
    a=st.tuples(CENTURY, st.integers(1, 16_383), st.integers(0, 15)),
    b=st.tuples(CENTURY, st.integers(1, 16_383), st.integers(0, 15)),
)
def test_numbers_order_like_positions(a, b):
    if a[:2] < b[:2]:
        assert BINARY.compose(*a) < BINARY.compose(*b)


def test_fall_back_repeats_wall_clock_seconds():
    paris = OrderNumberFormat(zone="Europe/Paris")
    before = datetime(2025, 10, 26, 0, 59, 59, tzinfo=UTC)  # 02:59:59 CEST
    after = datetime(2025, 10, 26, 1, 0, 0, tzinfo=UTC)  # 02:00:00 CET
    assert paris.local_second(after) < paris.local_second(before)
    assert paris.utc_offset_at(before.timestamp()) == 7200
    assert paris.utc_offset_at(after.timestamp()) == 3600
    assert paris.decode(paris.compose(paris.local_second(before), 1)).local_time.tzinfo == ZoneInfo(
        "Europe/Paris"
    )


# ------------------------------------------------------------ state machine
def step(last, now, *, cap=7, count=1, first=1, lead=5, now_ms=500):
    return reserve(last, now, now_ms, cap=cap, count=count, first_sequence=first, max_lead=lead)


def test_new_second_restarts_the_sequence():
    assert step((100, 7), 101) == ((101, 1), Reserved(101, 1, 1))
    assert step((100, 2), 101, first=4) == ((101, 4), Reserved(101, 4, 1))


def test_same_second_continues_up_to_the_cap():
    assert step((100, 3), 100, count=10) == ((100, 7), Reserved(100, 4, 4))
    state, outcome = step((100, 7), 100, now_ms=250)
    assert state == (100, 7) and outcome == SecondFull(750)


def test_clock_behind_within_the_bound_continues_from_the_last_second():
    assert step((100, 3), 97) == ((100, 4), Reserved(100, 4, 1))
    # full, and still within the bound: the next second
    assert step((100, 7), 97) == ((101, 1), Reserved(101, 1, 1))
    # full, and the next second would be beyond the bound: wait
    state, outcome = step((102, 7), 97)
    assert state == (102, 7) and isinstance(outcome, SecondFull)


def test_clock_behind_beyond_the_bound_refuses():
    assert step((100, 3), 94) == ((100, 3), ClockBehind(6))


@given(
    last=st.tuples(st.integers(0, 1000), st.integers(0, 7)),
    clocks=st.lists(st.integers(0, 1010), min_size=1, max_size=50),
    counts=st.lists(st.integers(1, 9), min_size=50, max_size=50),
)
def test_positions_only_ever_increase(last, clocks, counts):
    state = last
    issued = []
    for now, count in zip(clocks, counts, strict=False):
        state, outcome = step(state, now, count=count)
        if isinstance(outcome, Reserved):
            assert outcome.first_sequence >= 1 and outcome.first_sequence + outcome.count - 1 <= 7
            issued.extend(
                (outcome.local_second, outcome.first_sequence + i) for i in range(outcome.count)
            )
    assert issued == sorted(set(issued))
    assert all(p > last for p in issued)


@pytest.mark.parametrize("packing", ["binary", "decimal"])
@given(value=st.integers(min_value=-5, max_value=2**63 - 1))
def test_every_number_past_position_above_is_larger(packing, value):
    """Any old value (of another format, or none): resuming past ``position_above``
    gives larger numbers only, and the position is the tightest such."""
    fmt = OrderNumberFormat(packing=packing)
    try:
        position = fmt.position_above(value)
    except InvalidId:
        last = fmt.local_second(datetime(2099, 12, 31, 23, 59, 59, tzinfo=timezone.utc))
        assert value >= fmt.compose(last, fmt.max_sequence, 0)
        return
    if position is None:
        first = fmt.local_second(datetime(2000, 1, 1, tzinfo=timezone.utc))
        assert value < fmt.compose(first, 1, 0)
        return
    second, sequence = position
    following = (
        fmt.compose(second, sequence + 1)
        if sequence < fmt.max_sequence
        else fmt.compose(second + 1, 1)
    )
    assert following > value
    if sequence:
        assert fmt.compose(second, sequence) <= value
