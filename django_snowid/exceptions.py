"""Every exception of django-snowid (imports nothing: the pure core raises them too)."""

from __future__ import annotations


class SnowidError(Exception):
    """Base class of every exception raised by django-snowid."""


class LayoutError(SnowidError, ValueError):
    """A layout or a worker id does not describe a valid 63-bit id."""


class InvalidId(SnowidError, ValueError):
    """A value given to ``decode()`` is not an id of the layout (wrong type or out of range)."""


class InvalidSentValue(InvalidId):
    """A value a client sent (JSON, GraphQL) is refused; ``code`` says why."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class CheckDigitMismatch(InvalidId):
    """A number's check digit fails: a digit was mistyped, or two were swapped."""


class InvalidPublicId(InvalidId):
    """A string is not a public id of this project (see ``django_snowid.ids.publicids``)."""


class ClockMovedBackwards(SnowidError):
    """The clock is behind the last tick by more than the tolerance: no id until it catches up."""

    def __init__(self, *, behind_ms: float, tolerance_ms: float, hint: str = "") -> None:
        self.behind_ms = behind_ms
        self.tolerance_ms = tolerance_ms
        super().__init__(
            f"The clock moved backwards by {behind_ms:.3f} ms, more than the "
            f"{tolerance_ms:g} ms this generator waits out "
            "(SNOWID_CLOCK_BACKWARDS_TOLERANCE_MS). No id was issued: ids issued now "
            "could repeat earlier ones. Check NTP (use slewing, not stepping)."
            f"{hint}"
        )


class TimeBitsExhausted(SnowidError):
    """The clock is past the last instant the layout's time bits can represent."""


class GeneratorForked(SnowidError):
    """A generator created in a parent process was used in a forked child."""


class WorkerIdError(SnowidError):
    """No safe worker id could be determined for this process."""


class StaticWorkerIdAfterFork(WorkerIdError):
    """A forked child would share its parent's fixed worker id."""


class OrderNumberError(SnowidError):
    """An order number could not be issued."""


class OrderNumberUnavailable(OrderNumberError):
    """The store that keeps the order-number sequence (Redis or the database) is unreachable."""


class OrderSecondFull(OrderNumberError):
    """Every sequence of the current second is used, and waiting is not allowed or too long."""


class OrderClockBehind(OrderNumberError):
    """The clock is behind the stream's last issued number by more than the allowed bound."""


class OrderKeyConflict(OrderNumberError):
    """The stream conceals the second with another key than ``SNOWID_ORDER_KEY``'s."""


class InvalidShardValue(OrderNumberError, ValueError):
    """The attribute named by ``shard_from`` is missing, None, negative or not an integer."""


class WorkerLeaseLost(WorkerIdError):
    """This process could not renew its worker-id lease in time and stopped issuing ids."""


class WorkerPoolExhausted(WorkerIdError):
    """Every worker id of the pool is leased by a live process."""


class WorkerLayoutConflict(WorkerIdError):
    """Live leases of this layout name place node bits elsewhere: no ids until they are gone."""


class WorkerIdUnavailable(WorkerIdError):
    """The lease store (Redis or the database) is unreachable or holds garbage."""


class OrderTransactionConflict(OrderNumberError):
    """A deadlock, lock timeout or serialization failure: nothing issued; rerun the transaction."""


class RedisUnavailable(SnowidError):
    """Redis is unreachable (refused, timed out, broken, cluster down); the message says why."""


class RedisClientError(SnowidError):
    """The configured Redis client cannot be made (bad alias or factory)."""

    def __init__(self, message: str, check_id: str = "django_snowid.E500") -> None:
        super().__init__(message)
        self.check_id = check_id


class SequenceError(SnowidError):
    """A value of a named sequence could not be issued."""


class UnknownSequence(SequenceError, LookupError):
    """An undeclared name, with ``SNOWID_SEQUENCES_UNKNOWN = "refuse"``."""


class InvalidSequence(SequenceError, ValueError):
    """A name, a count or a declaration is not valid."""


class SequenceUnavailable(SequenceError):
    """The store that must act is unreachable. Nothing was issued."""


class SequenceLocked(SequenceError):
    """``nowait=True`` and another transaction holds the sequence. Nothing was issued."""


class SequenceNotSupported(SequenceError):
    """The configured sequence store cannot do what the call asks. Nothing was issued."""


class AdoptionError(SnowidError):
    """``snowid_adopt`` refused a step; the message says why. Nothing was changed by it."""


class PageParameterError(SnowidError, ValueError):
    """A query parameter of a page by ids is not valid; ``parameter`` names it."""

    def __init__(self, parameter: str, message: str) -> None:
        self.parameter = parameter
        self.reason = message
        super().__init__(f"{parameter}: {message}")


class CursorKeyError(SnowidError):
    """A field cannot order pages by ids (not a Snowflake field, no index, nullable)."""


class SettledBoundError(SnowidError):
    """The settled bound of a feed cannot be known on this connection (a replica, or a
    transaction whose snapshot is older than the bound); the message names the fix."""


#: Refusals that pass by themselves: the request can be tried again in a moment.

TRY_AGAIN: tuple[type[SnowidError], ...] = (
    ClockMovedBackwards,
    OrderNumberUnavailable,
    OrderSecondFull,
    OrderClockBehind,
    OrderTransactionConflict,
    WorkerIdUnavailable,
    WorkerLeaseLost,
    WorkerPoolExhausted,
    WorkerLayoutConflict,
    RedisUnavailable,
    SequenceUnavailable,
    SequenceLocked,
)
