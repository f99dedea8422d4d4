"""The per-stream state machine of order numbers, shared by every store.

A stream's state is the position of its last issued number: ``(local_second, sequence)``
(see :mod:`.order_format`). Reserving ``count`` numbers at wall-clock second ``now``:

- a new second (``now > last second``) restarts the sequence at ``first_sequence``
  (1, or 1 + a random offset so that numbers do not reveal the shop's volume);
- the same second continues the sequence, up to the cap;
- a clock behind the last second (rollback, or the repeated hour of a fall-back) keeps
  issuing from the last second, as long as it is at most ``max_lead`` seconds ahead
  of the clock; when that second is full it moves on to the next one within the same
  bound. Beyond the bound nothing is issued.

The Redis store runs the same steps in Lua (:mod:`django_snowid.orders.stores.redis`);
the database store calls :func:`reserve` under a row lock.
"""

from __future__ import annotations

from dataclasses import dataclass

from .order_blocks import Block, grant

__all__ = [
    "ClockBehind",
    "Reserved",
    "Resuming",
    "SecondFull",
    "behind",
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


Outcome = Reserved | SecondFull | ClockBehind | Resuming


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
    """Return the new state and what was reserved (at most ``count`` numbers).

    ``now`` is the local second, ``now_ms`` the milliseconds into it.
    """
    second, sequence = last
    if now > second:
        second, sequence = now, first_sequence - 1
    elif second - now > max_lead:
        return last, ClockBehind(second - now)
    if sequence >= cap:
        if now < second < now + max_lead:
            # Behind the clock already: move on to the next second, still within the bound.
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
    """:func:`reserve` of a block for one process: the same steps, but the store grants
    what :func:`~.order_blocks.grant` allows of the rest of the second, and one number
    alone in a second ahead of the clock. The block knows how long its second lasts."""
    state, outcome = reserve(
        last, now, now_ms, cap=cap, count=1, first_sequence=first_sequence, max_lead=max_lead
    )
    if not isinstance(outcome, Reserved):
        return state, outcome
    second, sequence = outcome.local_second, outcome.first_sequence - 1
    granted = grant(cap - sequence, count) if second == now else 1
    ms_left = (second - now) * 1000 + (1000 - now_ms)
    return (second, sequence + granted), Block(second, sequence + 1, granted, ms_left)


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

    ``state`` is what the store holds (``None``: nothing), ``database`` the position of the
    stream's largest number in the database, ``now`` the store's local second. A store
    that holds nothing lost numbers; so may a store whose number met a conflict in the
    database (``force``). Numbers reserved before the loss may still be on their way to
    the database, at any position up to the store's current second (or up to the
    database's largest, if that runs ahead): the stream resumes at the start of the
    second after both, where no such reservation can be. It costs the rest of the current
    second's numbers. A store at or above the database, not forced, is left alone; one
    whose own state is behind it resumes as :func:`behind` says.

    The Redis store also holds the stream there until its clock reaches that second
    (:class:`Resuming`): numbers are then never issued ahead of its clock, so a state lost
    again right after a recovery is still behind the clock of the next one.

    An ``unverified`` state was written by another server than the store's (a replica
    promoted by a failover, which may have lagged): numbers were issued past it, in its
    own second too if the stream ran ahead of the clock. The stream resumes at the second
    after the clock, the database's largest number and that state.
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
    """Where a store whose own state is behind ``database`` resumes: another store issued
    the stream since (a switch of store, processes with other settings). At the second
    after the clock's, or right after the database's largest number when that is further
    ahead: stores taking turns never push the stream a second further at each turn."""
    return max((now + 1, first_sequence - 1), database)
