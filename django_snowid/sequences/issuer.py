"""The public API of named sequences: ``next_value(name)``, ``next_values(name, count)``,
``last_value(name)``, ``delete(name)``, and :class:`Sequence`, which keeps a name and
its options for all four."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from typing import Any

from .. import metrics
from ..conf import conf, on_settings_changed
from ..exceptions import InvalidSequence, SequenceUnavailable
from .spec import SequenceSpec, get_spec
from .stores import get_store

__all__ = ["Sequence", "delete", "last_value", "next_value", "next_values"]

logger = logging.getLogger(__name__)


class Tally:
    """Values issued under one pair of metric labels: a plain int, read at scrape time."""

    __slots__ = ("issued", "labels")

    def __init__(self, labels: tuple[str, str]) -> None:
        self.labels = labels
        self.issued = 0


# One tally per (sequence label, store), kept across settings changes: a counter never goes back.
_tallies: metrics.Registry[tuple[str, str], Tally] = metrics.Registry()


def _issued() -> Iterator[tuple[str, tuple[str, ...], metrics.Reader]]:
    for tally in list(_tallies.values()):
        yield "sequence_values_issued", tally.labels, partial(getattr, tally, "issued")


metrics.register(live=_issued)


def _after_fork_in_child() -> None:
    # A child is a new process: its counts start at zero (metrics, multiprocess files).
    for tally in list(_tallies.values()):
        tally.issued = 0


os.register_at_fork(after_in_child=_after_fork_in_child)

# name -> (store, spec, tally or None); emptied when a setting changes.
_resolved: dict[str, tuple[Any, SequenceSpec, Tally | None]] = {}


@on_settings_changed
def _forget() -> None:
    _resolved.clear()


def _resolve(name: str) -> tuple[Any, SequenceSpec, Tally | None]:
    entry = _resolved.get(name)
    if entry is None:
        store = get_store()
        tally = None
        if conf.METRICS:
            labels = (name if name in conf.SEQUENCES else "undeclared", store.name)
            tally = _tallies.setdefault(labels, Tally(labels))
        entry = (store, get_spec(name), tally)
        if len(_resolved) > 4096:  # names made up at run time
            _resolved.clear()
        _resolved[name] = entry
    return entry


#: The largest value a sequence holds (a signed 64-bit column).
MAX_VALUE = 2**63 - 1


def _int(value: Any, what: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_VALUE:
        raise InvalidSequence(
            f"{what} is {value!r}: expected an integer from {least} to {MAX_VALUE}. Nothing "
            "was issued."
        )
    return value


def _options(
    spec: SequenceSpec, initial_value: int | None, reset_value: int | None, increment: int
) -> SequenceSpec:
    """``spec`` with the options of a call: ``initial_value`` replaces its start."""
    start = spec.start if initial_value is None else _int(initial_value, "initial_value", 0)
    step = _int(increment, "increment", 1)
    if reset_value is not None and _int(reset_value, "reset_value", 0) <= start:
        raise InvalidSequence(
            f"reset_value {reset_value} must be greater than the first value {start}."
        )
    # initial_value: the first value of a new sequence only, as in django-sequences.
    lift = initial_value is None and spec.lift
    return replace(spec, start=start, step=step, reset=reset_value, lift=lift)


def next_values(
    name: str,
    count: int,
    *,
    using: str | None = None,
    initial_value: int | None = None,
    increment: int = 1,
    nowait: bool = False,
) -> range:
    """The next ``count`` values of sequence ``name``, as a ``range`` (one block; its step
    is ``increment``).

    ``using`` names the database of the mark (default: the router's ``db_for_write``).
    ``initial_value`` is the first value of a new (or deleted) sequence, instead of the
    declared ``start`` (1 by default); it never changes a sequence that has values.
    ``nowait`` (database store): raise :class:`~django_snowid.exceptions.SequenceLocked`
    at once instead of waiting for another transaction that holds the sequence.
    """
    _int(count, "count", 1)
    store, spec, tally = _resolve(name)
    if initial_value is not None or increment != 1:
        spec = _options(spec, initial_value, None, increment)
    try:
        values = store.next_values(spec, count, using, nowait=nowait)
    except SequenceUnavailable:
        _unreachable(store, name)
        raise
    if tally is not None:
        tally.issued += count
    return values


def next_value(
    name: str,
    *,
    using: str | None = None,
    initial_value: int | None = None,
    reset_value: int | None = None,
    increment: int = 1,
    nowait: bool = False,
) -> int:
    """The next value of sequence ``name``.

    ``reset_value`` (database store): values cycle from the first value up to
    ``reset_value - 1``. The other options are those of :func:`next_values`.
    """
    store, spec, tally = _resolve(name)
    if initial_value is not None or reset_value is not None or increment != 1:
        spec = _options(spec, initial_value, reset_value, increment)
    try:
        if nowait:
            values = store.next_values(spec, 1, using, nowait=True)
        else:
            values = store.next_values(spec, 1, using)
    except SequenceUnavailable:
        _unreachable(store, name)
        raise
    if tally is not None:
        tally.issued += 1
    return values.start


def draw(name: str, using: str | None) -> tuple[int, float]:
    """One value of sequence ``name`` and the time it was drawn at (the store's clock):
    what ``SequenceField`` and ``SequenceTextField`` store (the day of a daily text)."""
    store, spec, tally = _resolve(name)
    now = store.clock()
    try:
        value = store.next_values(spec, 1, using, now).start
    except SequenceUnavailable:
        _unreachable(store, name)
        raise
    if tally is not None:
        tally.issued += 1
    return value, now


def _unreachable(store: Any, name: str) -> None:
    metrics.refused(
        logger,
        "sequences",
        "store_unreachable",
        f"the sequence store {store.name!r} is unreachable; sequence {name!r} issued nothing.",
    )


def last_value(name: str, *, using: str | None = None) -> int | None:
    """The last value sequence ``name`` issued (today's, for a daily one), without drawing
    one; ``None`` if it has issued none. Another caller may draw the next one at once: the
    answer is a reading, not a reservation."""
    store, spec, _ = _resolve(name)
    return store.last_value(spec, using)


def delete(name: str, *, using: str | None = None) -> bool:
    """Delete sequence ``name`` (today's, for a daily one): its next value is its first
    value again. True if it existed.

    The one call that lets a sequence issue its values again: see "Deleting a sequence"
    in the docs for what it does to the mark.
    """
    store, spec, _ = _resolve(name)
    return store.delete(spec, using)


class Sequence:
    """A named sequence with its options, for every call: ``next(seq)``,
    ``itertools.islice(seq, 5)``, ``seq.get_next_value()``, ``seq.get_next_values(10)``,
    ``seq.get_last_value()``, ``seq.delete()``."""

    def __init__(
        self,
        name: str,
        *,
        initial_value: int | None = None,
        reset_value: int | None = None,
        increment: int = 1,
        using: str | None = None,
    ) -> None:
        _resolve(name)  # a bad name fails here, not at the first draw
        _options(get_spec(name), initial_value, reset_value, increment)
        self.name = name
        self.initial_value = initial_value
        self.reset_value = reset_value
        self.increment = increment
        self.using = using

    def __repr__(self) -> str:
        return f"Sequence({self.name!r})"

    def get_next_value(self, *, nowait: bool = False) -> int:
        return next_value(
            self.name,
            using=self.using,
            initial_value=self.initial_value,
            reset_value=self.reset_value,
            increment=self.increment,
            nowait=nowait,
        )

    def get_next_values(self, count: int, *, nowait: bool = False) -> range:
        if self.reset_value is not None:
            raise InvalidSequence(
                f"{self!r} cycles (reset_value={self.reset_value}): it issues one value at a time."
            )
        return next_values(
            self.name,
            count,
            using=self.using,
            initial_value=self.initial_value,
            increment=self.increment,
            nowait=nowait,
        )

    def get_last_value(self) -> int | None:
        return last_value(self.name, using=self.using)

    def delete(self) -> bool:
        return delete(self.name, using=self.using)

    def __iter__(self) -> Iterator[int]:
        return self

    def __next__(self) -> int:
        return self.get_next_value()
