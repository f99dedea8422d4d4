"""Where named sequences live: the database alone (:mod:`.database`), or Redis under a
database mark (:mod:`.redis`). :func:`get_store` gives the store of
``SNOWID_SEQUENCE_BACKEND``, one per process and settings.

The Redis store is imported when it is first used: a project whose sequences live in the
database never imports ``redis``.
"""

from __future__ import annotations

from typing import Any

from ...conf import conf, on_settings_changed
from ...exceptions import InvalidSequence
from ..spec import BACKENDS
from .database import DatabaseSequenceStore

__all__ = ["get_store"]

# The store of the current settings (a list of at most one, emptied when a setting changes).
_stores: list[Any] = []
on_settings_changed(_stores.clear)


def get_store() -> Any:
    """The store ``SNOWID_SEQUENCE_BACKEND`` names, kept until a setting changes."""
    if not _stores:
        backend = conf.SEQUENCE_BACKEND
        if backend not in BACKENDS:
            raise InvalidSequence(
                f"SNOWID_SEQUENCE_BACKEND is {backend!r}: expected one of {BACKENDS}."
            )
        if backend == "redis":
            from .redis import RedisSequenceStore  # imports redis: only for its users

            _stores.append(RedisSequenceStore(conf.REDIS_ALIAS, conf.REDIS_KEY_PREFIX))
        else:
            _stores.append(DatabaseSequenceStore())
    return _stores[0]
