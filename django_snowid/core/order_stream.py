"""The per-stream state machine of order numbers, shared by every store: the reference the
Redis store's Lua and the database store's SQL restate (``tests/order_transitions.py``
runs the same generated traces through all three). A state is ``(local_second, sequence)``
of the last number: a new second restarts the sequence, the same second continues it up to
the cap, and a clock behind keeps issuing at most ``max_lead`` seconds ahead of it."""

from __future__ import annotations

from dataclasses import dataclass

from .order_blocks import Block, grant
from .order_keys import KeyConflict, KeyRecord, KeyWindow, OutsideWindow, agree

__all__ = [
    "ClockBehind",
    "KeyConflict",
    "OutsideWindow",
    "Reserved",
    "Resuming",
    "SecondFull",
    "behind",
    "held",
    "keyed",
    "reserve",
    "reserve_block",
    "resume",
]


@dataclass(frozen=True)
class Reserved:
    local_second: int
    first_sequence: int
    count: int


@dataclass(frozen=True)
class SecondFull:
    """The current second has no sequence left: try again in ``wait_ms``."""

    wait_ms: int


@dataclass(frozen=True)
class ClockBehind:
    """The clock is behind the stream's last second by more than the bound."""

    seconds: int


@dataclass(frozen=True)
class Resuming:
    """The stream was recovered at the next second: try again in ``wait_ms``, when the
    clock has reached it (see :func:`resume`)."""

    wait_ms: int


Outcome = Reserved | SecondFull | ClockBehind | Resuming | OutsideWindow | KeyConflict


def reserve(
    last: tuple[int, int],
    now: int,
    now_ms: int,
    *,
    cap: int,
    count: int,
    first_sequence: int,
    max_lead: int,
) -> tuple[tuple[int, int], Outcome]:
    """The new state and what was reserved (at most ``count`` numbers) at local second
    ``now``, ``now_ms`` into it."""
    second, sequence = last
    if now > second:
        second, sequence = now, first_sequence - 1
    elif second - now > max_lead:
        return last, ClockBehind(second - now)
    if sequence >= cap:
        if now < second < now + max_lead:
            second, sequence = second + 1, first_sequence - 1
        else:
            return last, SecondFull((second - now) * 1000 + (1000 - now_ms))
    granted = min(count, cap - sequence)
    return (second, sequence + granted), Reserved(second, sequence + 1, granted)


def reserve_block(
    last: tuple[int, int],
    now: int,
    now_ms: int,
    *,
    cap: int,
    count: int,
    first_sequence: int,
    max_lead: int,
) -> tuple[tuple[int, int], Block | Outcome]:
    """:func:`reserve` of a block for one process: what :func:`~.order_blocks.grant` allows
    of the rest of the second (one number in a second ahead of the clock)."""
    state, outcome = reserve(
        last, now, now_ms, cap=cap, count=1, first_sequence=first_sequence, max_lead=max_lead
    )
    if not isinstance(outcome, Reserved):
        return state, outcome
    second, sequence = outcome.local_second, outcome.first_sequence - 1
    granted = grant(cap - sequence, count) if second == now else 1
    ms_left = (second - now) * 1000 + (1000 - now_ms)
    return (second, sequence + granted), Block(second, sequence + 1, granted, ms_left)


def held(hold: int | None, now: int, now_ms: int) -> Resuming | None:
    """What a store that holds a stream it resumed at second ``hold`` (the clock's next
    one; the Redis store does) answers before reserving at ``now``: :class:`Resuming`
    while the clock is in the second before; ``None`` once it is not (the hold is then
    dropped, a clock stepped further back included)."""
    if hold is not None and now < hold <= now + 1:
        return Resuming(1000 - now_ms)
    return None


def keyed(
    last: tuple[int, int],
    record: KeyRecord,
    window: KeyWindow | None,
    state: tuple[int, int],
    outcome: Block | Outcome,
) -> tuple[tuple[int, int], KeyRecord, Block | Outcome]:
    """(state, record, outcome) of a reservation from ``last`` once the keys agree
    (``order_keys.agree``; ``window`` None: plain numbers); a refusal keeps ``last``."""
    if window is None or not isinstance(outcome, Reserved | Block):
        return state, record, outcome
    agreed = agree(record, last[0], outcome.local_second, window)
    if isinstance(agreed, KeyRecord):
        return state, agreed, outcome
    return last, record, agreed


def resume(
    state: tuple[int, int] | None,
    database: tuple[int, int] | None,
    now: int,
    *,
    first_sequence: int,
    force: bool = False,
    unverified: bool = False,
) -> tuple[int, int]:
    """The state a stream's store must hold after a recovery (never lower than ``state``).

    A lost, ``force``d or ``unverified`` state resumes at the second after the store's
    clock, the database's largest number (and an unverified state), where no reservation
    still on its way to the database can be. A state at or above the database is kept; one
    behind it resumes as :func:`behind` says.
    """
    if state is not None and not (force or unverified) and (database is None or state >= database):
        return state
    if state is not None and not (force or unverified) and database is not None:
        return behind(database, now, first_sequence=first_sequence)
    second = max(now, database[0] if database is not None else now)
    if unverified and state is not None:
        second = max(second, state[0])
    target = (second + 1, first_sequence - 1)
    return target if state is None or state < target else state


def behind(database: tuple[int, int], now: int, *, first_sequence: int) -> tuple[int, int]:
    """Where a store whose state is behind ``database`` resumes: the second after the
    clock's, or right after the database's largest number when that is further ahead."""
    return max((now + 1, first_sequence - 1), database)
