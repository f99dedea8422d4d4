"""``next_value(name)`` and ``next_values(name, count)``: the public API of named sequences."""

from __future__ import annotations

from typing import Any

from ..conf import conf, on_settings_changed
from .exceptions import InvalidSequence
from .spec import BACKENDS, SequenceSpec, get_spec, setting
from .stores.redis import DatabaseSequenceStore, RedisSequenceStore

__all__ = ["get_store", "next_value", "next_values"]

# The store of the current settings (a list of at most one, emptied when a setting changes).
_stores: list[Any] = []
# name -> (store, spec): a value costs no settings lookup. Emptied when a setting changes.
_resolved: dict[str, tuple[Any, SequenceSpec]] = {}


@on_settings_changed
def _forget() -> None:
    _resolved.clear()
    _stores.clear()


def _resolve(name: str) -> tuple[Any, SequenceSpec]:
    entry = _resolved.get(name)
    if entry is None:
        entry = (get_store(), get_spec(name))
        if len(_resolved) > 4096:  # names made up at run time
            _resolved.clear()
        _resolved[name] = entry
    return entry


def get_store() -> DatabaseSequenceStore | RedisSequenceStore:
    """The store ``SNOWID_SEQUENCE_BACKEND`` names, kept until a setting changes."""
    if not _stores:
        backend = setting("SNOWID_SEQUENCE_BACKEND")
        if backend not in BACKENDS:
            raise InvalidSequence(
                f"SNOWID_SEQUENCE_BACKEND is {backend!r}: expected one of {BACKENDS}."
            )
        _stores.append(
            RedisSequenceStore(conf.REDIS_ALIAS, conf.REDIS_KEY_PREFIX)
            if backend == "redis"
            else DatabaseSequenceStore()
        )
    return _stores[0]


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
