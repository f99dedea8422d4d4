"""``next_value(name)`` and ``next_values(name, count)``: the public API of named sequences."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from .. import metrics
from ..conf import conf, on_settings_changed
from ..exceptions import InvalidSequence, SequenceUnavailable
from .spec import SequenceSpec, get_spec
from .stores import get_store

__all__ = ["next_value", "next_values"]

logger = logging.getLogger(__name__)


class Tally:
    """Values issued under one pair of metric labels: a plain int, read at scrape time."""

    __slots__ = ("issued", "labels")

    def __init__(self, labels: tuple[str, str]) -> None:
        self.labels = labels
        self.issued = 0


# One tally per (sequence label, store); kept across settings changes (a counter never
# goes back), and few: names made up at run time share the label "undeclared".
_tallies: dict[tuple[str, str], Tally] = {}


def _issued() -> Iterator[tuple[str, tuple[str, ...], int]]:
    for tally in list(_tallies.values()):
        yield "sequence_values_issued", tally.labels, tally.issued


metrics.register(live=_issued)

# name -> (store, spec, tally or None): a value costs no settings lookup. Emptied when a
# setting changes. No tally: SNOWID_METRICS is off.
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


def next_values(name: str, count: int, *, using: str | None = None) -> range:
    """The next ``count`` values of sequence ``name``, as a ``range`` (one block).

    ``using`` names the database of the mark (default: the router's ``db_for_write``).
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise InvalidSequence(f"count is {count!r}: expected an integer >= 1.")
    store, spec, tally = _resolve(name)
    try:
        values = store.next_values(spec, count, using)
    except SequenceUnavailable:
        _unreachable(store, name)
        raise
    if tally is not None:
        tally.issued += count
    return values


def next_value(name: str, *, using: str | None = None) -> int:
    """The next value of sequence ``name``."""
    store, spec, tally = _resolve(name)
    try:
        values = store.next_values(spec, 1, using)
    except SequenceUnavailable:
        _unreachable(store, name)
        raise
    if tally is not None:
        tally.issued += 1
    return values.start


def _unreachable(store: Any, name: str) -> None:
    metrics.refused(
        logger,
        "sequences",
        "store_unreachable",
        f"the sequence store {store.name!r} is unreachable; sequence {name!r} issued nothing.",
    )
