"""Reservation cases for the property tests that hold a store against the pure core
(``orders/stores/test_redis.py``: the Redis Lua; ``orders/stores/test_database.py``: the
database statement): a clock, a zone offset, a stored state and what is asked of it."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from django_snowid.core.order_stream import reserve

NOW = 1_767_225_600  # 2026-01-01 00:00:00 UTC
# Whole quarter hours from UTC-12 to UTC+14: every offset a zone has.
offsets = st.integers(-48, 56).map(lambda quarters: quarters * 900)


@st.composite
def reservations(draw: Any) -> dict[str, Any]:
    cap = draw(st.integers(1, 40))
    offset = draw(offsets)
    unix = NOW + draw(st.integers(0, 10_000))
    max_lead = draw(st.integers(1, 8))
    return {
        "unix": unix,
        "micros": draw(st.integers(0, 999_999)),
        "offset": offset,
        # The state from well behind the clock to beyond the lead ahead of it.
        "last": (unix + offset + draw(st.integers(-3, max_lead + 3)), draw(st.integers(0, cap))),
        "cap": cap,
        "count": draw(st.integers(1, cap + 5)),
        # 1, or a random start: 1 + an offset below the cap (SNOWID_ORDER_RANDOM_START).
        "first_sequence": 1 + draw(st.integers(0, cap - 1)),
        "max_lead": max_lead,
    }


def picked(last_delta: int, sequence: int, **kw: Any) -> dict[str, Any]:
    """A hand-picked case: the state ``last_delta`` seconds ahead of the clock."""
    base = {
        "unix": NOW,
        "micros": 250_000,
        "offset": 0,
        "cap": 10,
        "count": 1,
        "first_sequence": 1,
        "max_lead": 5,
    } | kw
    return base | {"last": (base["unix"] + base["offset"] + last_delta, sequence)}


def core_reserve(case: dict[str, Any], step: Any = reserve) -> tuple[tuple[int, int], Any]:
    """What the pure core's ``step`` (``reserve`` or ``reserve_block``) makes of ``case``:
    (the state after, the outcome)."""
    return step(
        case["last"],
        case["unix"] + case["offset"],
        case["micros"] // 1000,
        cap=case["cap"],
        count=case["count"],
        first_sequence=case["first_sequence"],
        max_lead=case["max_lead"],
    )


def script_argv(case: dict[str, Any], window: Any = None, *, clock: bool = True) -> tuple:
    """RESERVE's and RESERVE_BLOCK's arguments for ``case`` (their comment in
    ``orders/stores/redis.py``); ``window``: a ``KeyWindow``; ``clock``: else TIME."""
    keys = ("", "", "", "") if window is None else window.as_args()
    clock_args = (case["unix"], case["micros"]) if clock else ("", "")
    argv = (case["offset"], case["cap"], case["count"], case["first_sequence"], case["max_lead"])
    return (*argv, *clock_args, *keys)


KEY_IDS = ("", "0123456789abcdef", "fedcba9876543210", "00000000000000aa")


@st.composite
def keyed_reservations(draw: Any) -> dict[str, Any]:
    """A reservation, the stream's key record and the process's key window, all around
    the clock's second: each step of ``core.order_keys.agree`` has its chance."""
    from django_snowid.core.order_keys import NEVER, KeyRecord, KeyWindow

    case = draw(reservations())
    local = case["unix"] + case["offset"]
    key_id = draw(st.sampled_from(KEY_IDS))
    next_id = draw(st.sampled_from(KEY_IDS)) if key_id else ""
    record = KeyRecord(key_id, next_id, local + draw(st.integers(-3, 4)) if next_id else 0)
    start = draw(st.sampled_from([-(2**62), local + draw(st.integers(-4, 4))]))
    following = draw(st.sampled_from((*KEY_IDS[1:], "")))
    end = start + draw(st.integers(1, 8)) if following and start > 0 else NEVER
    if following and start < 0:
        end = local + draw(st.integers(-2, 6))
    window = KeyWindow(draw(st.sampled_from(KEY_IDS[1:])), start, end, following)
    return case | {"record": record, "window": window}


def core_keyed(case: dict[str, Any], step: Any = reserve) -> tuple[Any, Any, Any]:
    """(state, record, outcome) the pure core makes of a :func:`keyed_reservations` case."""
    from django_snowid.core.order_stream import keyed

    state, outcome = core_reserve(case, step)
    return keyed(case["last"], case["record"], case["window"], state, outcome)
