"""``next_value(name)`` and ``next_values(name, count)``: the public API of named sequences."""

from __future__ import annotations

from typing import Any

from ..conf import on_settings_changed
from ..exceptions import InvalidSequence
from .spec import SequenceSpec, get_spec
from .stores import get_store

__all__ = ["next_value", "next_values"]

# name -> (store, spec): a value costs no settings lookup. Emptied when a setting changes.
_resolved: dict[str, tuple[Any, SequenceSpec]] = {}


@on_settings_changed
def _forget() -> None:
    _resolved.clear()


def _resolve(name: str) -> tuple[Any, SequenceSpec]:
    entry = _resolved.get(name)
    if entry is None:
        entry = (get_store(), get_spec(name))
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
    store, spec = _resolve(name)
    return store.next_values(spec, count, using)


def next_value(name: str, *, using: str | None = None) -> int:
    """The next value of sequence ``name``."""
    store, spec = _resolve(name)
    return store.next_values(spec, 1, using).start
