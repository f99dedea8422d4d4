"""What every order store shares: the arguments, the answers and the protocol."""

from __future__ import annotations

from typing import Final, NamedTuple, Protocol, get_args

from ...conf import OrderBackend
from ...core.order_blocks import Block
from ...core.order_keys import KeyRecord, KeyWindow
from ...core.order_stream import Outcome

__all__ = [
    "BACKENDS",
    "MISSING",
    "Missing",
    "OrderStore",
    "Position",
    "RecoverArgs",
    "ReserveArgs",
]

BACKENDS: Final[tuple[OrderBackend, ...]] = get_args(OrderBackend)


class Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: The store holds no state for the stream that it can trust (none, or one another Redis
#: server wrote): the stream must be recovered from the database first.
MISSING: Final = Missing()

Position = tuple[int, int]


class ReserveArgs(NamedTuple):
    """What a reservation needs besides the stream (see ``core.order_stream.reserve``)."""

    offset: int  # the zone's UTC offset in seconds: local second = Unix second + offset
    cap: int  # the largest sequence of a second
    wanted: int  # how many numbers (not "count": that would hide tuple.count)
    first_sequence: int  # of a new second
    max_lead: int  # how many seconds the state may be ahead of the clock
    keys: KeyWindow | None = None  # the process's key (core.order_keys); None: plain numbers


class RecoverArgs(NamedTuple):
    """What a recovery needs besides the stream (see ``core.order_stream.resume``)."""

    offset: int  # the zone's UTC offset in seconds
    first_sequence: int  # of the second the stream resumes at
    force: bool  # resume past the store's clock even if the store is ahead of the database
    dry_run: bool = False  # decide as a recovery would, on the store's clock; change nothing


class OrderStore(Protocol):
    name: str

    def reserve(self, stream: str, args: ReserveArgs) -> Outcome | Missing: ...

    def holds_blocks(self) -> bool:
        """Whether a block reserved now stays reserved whatever the caller's transaction
        does (else a process reserves one number a call)."""
        ...

    def reserve_block(self, stream: str, args: ReserveArgs) -> Block | Outcome | Missing:
        """Reserve a block of at most ``args.wanted`` numbers of the current second for this
        process; the state moves past the whole block at once."""
        ...

    def recover(
        self, stream: str, database: Position | None, args: RecoverArgs
    ) -> tuple[Position | None, Position]:
        """Apply ``core.order_stream.resume`` atomically; returns (before, after)."""
        ...

    def read(self, stream: str) -> Position | None: ...

    def keys(self, stream: str) -> KeyRecord | None:
        """Which key the stream's numbers are concealed with (``None``: no record)."""
        ...

    def streams(self) -> list[str]:
        """The names of the streams the store holds a state for."""
        ...
