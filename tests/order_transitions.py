"""The order stream's transitions, described once and run against every implementation.

A trace is a stream's format (cap, zone offset, first sequence, lead) and a list of moves:
numbers taken one at a time or in bulk (``store.reserve``), blocks (``reserve_block``),
clock moves (forward, or steps back), restarts of the process (a new store object: the
database store forgets which second it last issued in), losses of the store's state (a
flushed Redis, a deleted row) and recoveries (``snowid_recover``, forced or dry). The
traces come from a seeded ``random.Random``: the same on every run, on every database.

:class:`CoreStream` is the reference: the pure core's steps (``core.order_stream``) on a
state held in Python. ``tests/orders/stores/test_transitions.py`` runs the same traces
through the Redis store's scripts and the database store's statements, move by move, and
holds what each answers (positions handed out, waits, refusals, the state left behind)
to what the core answers.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from django_snowid.core.order_blocks import Block
from django_snowid.core.order_stream import Reserved, held, reserve, reserve_block, resume
from django_snowid.orders.stores.base import MISSING, Position, RecoverArgs, ReserveArgs

NOW_MS = 1_767_225_600_000  # 2026-01-01 00:00:00 UTC
OFFSETS = (0, 19_800, -5 * 3600, 14 * 3600, -12 * 3600)  # UTC, +5:30, -5, +14, -12


@dataclass(frozen=True)
class Take:
    """``store.reserve``: one number (``count`` 1) or a bulk of them."""

    count: int


@dataclass(frozen=True)
class TakeBlock:
    """``store.reserve_block``: a block of at most ``count`` numbers for this process."""

    count: int


@dataclass(frozen=True)
class Tick:
    """The clock moves ``ms`` (negative: a step back)."""

    ms: int


@dataclass(frozen=True)
class Restart:
    """The process restarts: a new store object, the stored state kept."""


@dataclass(frozen=True)
class Lose:
    """The store loses the stream's state (a flushed Redis, a deleted row)."""


@dataclass(frozen=True)
class Recover:
    """A recovery from the database, which holds the largest position handed out."""

    force: bool = False
    dry_run: bool = False


Move = Take | TakeBlock | Tick | Restart | Lose | Recover


@dataclass(frozen=True)
class Trace:
    seed: int
    cap: int
    offset: int
    first_sequence: int
    max_lead: int
    start_ms: int
    moves: tuple[Move, ...]

    def args(self, wanted: int) -> ReserveArgs:
        return ReserveArgs(
            offset=self.offset,
            cap=self.cap,
            wanted=wanted,
            first_sequence=self.first_sequence,
            max_lead=self.max_lead,
        )

    def recover_args(self, move: Recover) -> RecoverArgs:
        return RecoverArgs(
            offset=self.offset,
            first_sequence=self.first_sequence,
            force=move.force,
            dry_run=move.dry_run,
        )


def _move(rng: random.Random, cap: int) -> Move:
    roll = rng.random()
    if roll < 0.30:
        return Take(1)
    if roll < 0.40:
        return Take(rng.randint(2, cap + 3))
    if roll < 0.55:
        return TakeBlock(rng.randint(1, 2 * cap))
    if roll < 0.75:
        return Tick(rng.choice((1, 50, 400, 999, 1000, 1001, 2500)))
    if roll < 0.82:
        return Tick(-rng.choice((1, 600, 1000, 2000, 4000, 9000)))
    if roll < 0.86:
        return Restart()
    if roll < 0.91:
        return Lose()
    return Recover(force=rng.random() < 0.4, dry_run=rng.random() < 0.3)


def trace(seed: int, length: int = 40) -> Trace:
    """The trace of ``seed``: a stream that starts with a recovery (as a new stream does)."""
    rng = random.Random(seed)
    cap = rng.choice((1, 2, 3, 5, 8, 13))
    moves = [Recover(), *(_move(rng, cap) for _ in range(length))]
    return Trace(
        seed=seed,
        cap=cap,
        offset=rng.choice(OFFSETS),
        first_sequence=rng.randint(1, cap),
        max_lead=rng.randint(1, 4),
        start_ms=NOW_MS + rng.randrange(86_400_000),
        moves=tuple(moves),
    )


class Stream(Protocol):
    """One stream in one implementation, on the trace's clock."""

    def reserve(self, args: ReserveArgs) -> Any: ...

    def reserve_block(self, args: ReserveArgs) -> Any: ...

    def recover(self, database: Position | None, args: RecoverArgs) -> Any: ...

    def restart(self) -> None: ...

    def lose(self) -> None: ...

    def read(self) -> Position | None: ...


@dataclass
class Clock:
    """The trace's clock in milliseconds; read half a millisecond in, so that every
    implementation reads the same millisecond back from the float."""

    ms: int

    def __call__(self) -> float:
        return (self.ms + 0.5) / 1000


@dataclass
class CoreStream:
    """The reference: ``core.order_stream`` on a state held here. ``holds``: the store
    holds a stream it resumed at the clock's next second until the clock reaches it
    (``core.order_stream.held``; the Redis store does, the database store serves it)."""

    clock: Clock
    holds: bool
    state: Position | None = None
    hold: int | None = None

    def _now(self, offset: int) -> tuple[int, int]:
        return self.clock.ms // 1000 + offset, self.clock.ms % 1000

    def _step(self, step: Callable[..., Any], args: ReserveArgs) -> Any:
        if self.state is None:
            return MISSING
        now, now_ms = self._now(args.offset)
        if self.hold is not None:
            waiting = held(self.hold, now, now_ms)
            if waiting is not None:
                return waiting
            self.hold = None
        self.state, outcome = step(
            self.state,
            now,
            now_ms,
            cap=args.cap,
            count=args.wanted,
            first_sequence=args.first_sequence,
            max_lead=args.max_lead,
        )
        return outcome

    def reserve(self, args: ReserveArgs) -> Any:
        return self._step(reserve, args)

    def reserve_block(self, args: ReserveArgs) -> Any:
        return self._step(reserve_block, args)

    def recover(self, database: Position | None, args: RecoverArgs) -> Any:
        now = self._now(args.offset)[0]
        after = resume(
            self.state, database, now, first_sequence=args.first_sequence, force=args.force
        )
        before = self.state
        if not args.dry_run and after != before:
            self.state = after
            self.hold = after[0] if self.holds and after[0] == now + 1 else None
        return before, after

    def restart(self) -> None:
        pass

    def lose(self) -> None:
        self.state = self.hold = None

    def read(self) -> Position | None:
        return self.state


def handed_out(outcome: Any) -> Iterator[Position]:
    """The positions a reservation hands out (none for any other answer)."""
    if isinstance(outcome, Reserved | Block):
        for sequence in range(outcome.first_sequence, outcome.first_sequence + outcome.count):
            yield outcome.local_second, sequence


@dataclass
class Run:
    """One trace through one implementation: what each move answered, and the state after."""

    trace: Trace
    stream: Stream
    clock: Clock
    issued: list[Position] = field(default_factory=list)

    def play(self, move: Move) -> tuple[Any, Position | None]:
        answer = self._answer(move)
        self.issued.extend(handed_out(answer))
        return answer, self.stream.read()

    def _answer(self, move: Move) -> Any:
        trace, stream = self.trace, self.stream
        if isinstance(move, Take):
            return stream.reserve(trace.args(move.count))
        if isinstance(move, TakeBlock):
            return stream.reserve_block(trace.args(move.count))
        if isinstance(move, Tick):
            self.clock.ms += move.ms
        elif isinstance(move, Restart):
            stream.restart()
        elif isinstance(move, Lose):
            stream.lose()
        else:
            database = max(self.issued) if self.issued else None
            return stream.recover(database, trace.recover_args(move))
        return None


def agree(trace: Trace, make: Callable[[Clock], Stream], *, holds: bool) -> None:
    """Run ``trace`` through the core and through the stream ``make(clock)`` builds, move
    by move; every answer and every state left behind must be the core's."""
    core_clock, clock = Clock(trace.start_ms), Clock(trace.start_ms)
    core = Run(trace, CoreStream(core_clock, holds), core_clock)
    other = Run(trace, make(clock), clock)
    for step, move in enumerate(trace.moves):
        expected, got = core.play(move), other.play(move)
        assert got == expected, (
            f"trace {trace.seed}, move {step} {move!r} (cap {trace.cap}, offset "
            f"{trace.offset}, first {trace.first_sequence}, lead {trace.max_lead}): "
            f"core {expected!r}, store {got!r}; moves so far {trace.moves[: step + 1]!r}"
        )
