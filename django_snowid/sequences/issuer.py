"""``next_value(name)`` and ``next_values(name, count)``: the public API of named sequences."""

from __future__ import annotations

import logging
from typing import Any

from .. import metrics
from ..conf import conf, on_settings_changed
from ..exceptions import InvalidSequence, SequenceUnavailable
from .spec import SequenceSpec, get_spec
from .stores import get_store

__all__ = ["next_value", "next_values"]

logger = logging.getLogger(__name__)

# name -> (store, spec, metric labels or None): a value costs no settings lookup. Emptied
# when a setting changes. The labels (None: SNOWID_METRICS is off) name a declared
# sequence; names made up at run time share one label, "undeclared", so that they cannot
# multiply the series.
_resolved: dict[str, tuple[Any, SequenceSpec, tuple[str, str] | None]] = {}


@on_settings_changed
def _forget() -> None:
    _resolved.clear()


def _resolve(name: str) -> tuple[Any, SequenceSpec, tuple[str, str] | None]:
    entry = _resolved.get(name)
    if entry is None:
        store = get_store()
        labels = None
        if conf.METRICS:
            labels = (name if name in conf.SEQUENCES else "undeclared", store.name)
        entry = (store, get_spec(name), labels)
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
    store, spec, labels = _resolve(name)
    try:
        values = store.next_values(spec, count, using)
    except SequenceUnavailable:
        _unreachable(store, name)
        raise
    if labels is not None:
        metrics.count("sequence_values_issued", *labels, by=count)
    return values


def next_value(name: str, *, using: str | None = None) -> int:
    """The next value of sequence ``name``."""
    store, spec, labels = _resolve(name)
    try:
        values = store.next_values(spec, 1, using)
    except SequenceUnavailable:
        _unreachable(store, name)
        raise
    if labels is not None:
        metrics.count("sequence_values_issued", *labels)
    return values.start


def _unreachable(store: Any, name: str) -> None:
    metrics.count("refusals", "sequences", "store_unreachable")
    logger.error(
        "Refused: the sequence store %r is unreachable; sequence %r issued nothing.",
        store.name,
        name,
    )
