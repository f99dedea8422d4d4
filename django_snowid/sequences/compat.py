"""django-sequences' API (3.x) on our mark table: replace ``from sequences import ...`` with
``from django_snowid.sequences.compat import ...`` and nothing else changes. Values always
come from the database store, in the caller's transaction; what django-sequences' table
refuses raises :class:`~django_snowid.exceptions.InvalidSequence` before anything is written.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db import OperationalError, connections, router

from ..exceptions import InvalidSequence, SequenceLocked
from .spec import SequenceSpec
from .stores.database import NO_FLOOR, advance, delete_mark, draw, read_mark

__all__ = [
    "Sequence",
    "SequenceLockedError",
    "delete",
    "get_last_value",
    "get_next_value",
    "get_next_values",
]


class SequenceLockedError(SequenceLocked, OperationalError):
    """``nowait=True`` and another transaction holds the sequence: our
    :class:`~django_snowid.exceptions.SequenceLocked`, and Django's ``OperationalError``
    (what django-sequences raises there), so existing ``except`` clauses still catch it."""


#: django-sequences' limits: a 100-character name, a ``PositiveBigIntegerField`` value.
MAX_NAME = 100
MAX_VALUE = 2**63 - 1


def _name(value: Any) -> str:
    if not isinstance(value, str) or len(value) > MAX_NAME:
        raise InvalidSequence(
            f"sequence_name is {value!r}: expected a string of at most {MAX_NAME} characters. "
            "Nothing was issued."
        )
    return value


def _int(value: Any, what: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_VALUE:
        raise InvalidSequence(
            f"{what} is {value!r}: expected an integer from {least} to {MAX_VALUE}. Nothing was "
            "issued."
        )
    return value


def _valid(name: Any, initial_value: Any, reset_value: Any, batch_size: int = 1) -> None:
    """Refuse what django-sequences' table refuses, and a batch that would go back."""
    _name(name)
    _int(initial_value, "initial_value", 0)
    _int(batch_size, "batch_size", 0)
    _int(initial_value + max(batch_size - 1, 0), "initial_value + batch_size - 1", 0)
    if reset_value is not None:
        _int(reset_value, "reset_value", 0)
        if reset_value <= initial_value:
            raise InvalidSequence("reset_value must be greater than initial_value")


def _model() -> Any:
    from .models import SequenceMark  # models cannot be imported before their app

    return SequenceMark


# (name, initial_value, reset_value, increment) -> spec: built once.
_specs: dict[tuple[str, int, int | None, int], SequenceSpec] = {}


def _spec(name: str, initial_value: int, reset_value: int | None, increment: int) -> SequenceSpec:
    key = (name, initial_value, reset_value, increment)
    spec = _specs.get(key)
    if spec is None:
        if len(_specs) > 4096:  # names made up at run time
            _specs.clear()
        spec = _specs[key] = SequenceSpec(
            name, start=initial_value, step=increment, reset=reset_value, lift=False
        )
    return spec


def _draw(
    sequence_name: str,
    initial_value: int,
    reset_value: int | None,
    batch_size: int,
    nowait: bool,
    using: str | None,
) -> range:
    _valid(sequence_name, initial_value, reset_value, batch_size)
    connection = connections[using or router.db_for_write(_model())]
    if batch_size == 0:  # as django-sequences: an empty range after the last value
        last = read_mark(connection, sequence_name)
        start = initial_value if last is None else last + 1
        return range(start, start)
    spec = _spec(sequence_name, initial_value, reset_value, 1)
    try:
        return draw(connection, spec, sequence_name, batch_size, nowait=nowait)
    except SequenceLocked as exc:
        raise SequenceLockedError(str(exc)) from exc.__cause__


def get_next_value(
    sequence_name: str = "default",
    initial_value: int = 1,
    reset_value: int | None = None,
    *,
    nowait: bool = False,
    using: str | None = None,
) -> int:
    """Return the next value for a sequence."""
    if reset_value is None and not nowait:  # the hot path: one statement
        _valid(sequence_name, initial_value, None)
        connection = connections[using or router.db_for_write(_model())]
        return advance(connection, sequence_name, floor=NO_FLOOR, by=1, first=initial_value)
    return _draw(sequence_name, initial_value, reset_value, 1, nowait, using).start


def get_next_values(
    batch_size: int,
    sequence_name: str = "default",
    initial_value: int = 1,
    *,
    nowait: bool = False,
    using: str | None = None,
) -> range:
    """Return the next values for a sequence."""
    return _draw(sequence_name, initial_value, None, batch_size, nowait, using)


def get_last_value(sequence_name: str = "default", *, using: str | None = None) -> int | None:
    """Return the last value for a sequence (``None`` if it has none)."""
    return read_mark(connections[using or router.db_for_read(_model())], sequence_name)


def delete(sequence_name: str = "default", *, using: str | None = None) -> bool:
    """Delete a sequence; True if it existed."""
    return delete_mark(connections[using or router.db_for_write(_model())], sequence_name)


class Sequence:
    """Generate a gapless sequence of integer values."""

    def __init__(
        self,
        sequence_name: str = "default",
        initial_value: int = 1,
        reset_value: int | None = None,
        *,
        using: str | None = None,
    ) -> None:
        _valid(sequence_name, initial_value, reset_value)
        self.sequence_name = sequence_name
        self.initial_value = initial_value
        self.reset_value = reset_value
        self.using = using

    def get_last_value(self) -> int | None:
        """Return the last value of the sequence."""
        return get_last_value(self.sequence_name, using=self.using)

    def get_next_value(self, *, nowait: bool = False) -> int:
        """Return the next value of the sequence."""
        return get_next_value(
            self.sequence_name,
            self.initial_value,
            self.reset_value,
            nowait=nowait,
            using=self.using,
        )

    def get_next_values(self, batch_size: int, *, nowait: bool = False) -> range:
        return get_next_values(
            batch_size,
            self.sequence_name,
            self.initial_value,
            nowait=nowait,
            using=self.using,
        )

    def delete(self) -> bool:
        """Delete the sequence."""
        return delete(self.sequence_name, using=self.using)

    def __iter__(self) -> Iterator[int]:
        return self

    def __next__(self) -> int:
        return self.get_next_value()
