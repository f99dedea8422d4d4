"""The one registry of stores: a family's configured store, built on first use, forgotten
when a setting changes; every store still alive is told of a fork."""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Hashable
from typing import Any

from ..conf import on_settings_changed
from .base import Family

__all__ = ["StoreRegistry", "get_store", "registry"]


class StoreRegistry:
    def __init__(self) -> None:
        self._stores: dict[tuple[str, str, Hashable], Any] = {}
        self._built: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lock = threading.Lock()

    def get(self, family: Family, choice: str | None = None) -> Any:
        """The store of ``choice`` (default: the one the family's setting names)."""
        if choice is None:
            choice = family.choice()
        key = (family.label, choice, family.scope())
        store = self._stores.get(key)
        if store is None:
            with self._lock:
                store = self._stores.get(key)
                if store is None:
                    store = self._stores[key] = family.factory(choice)()
                    self._built.add(store)
        return store

    def forget(self) -> None:
        """Build the next stores anew; those handed out keep serving their holders."""
        self._stores.clear()

    def after_fork(self) -> None:
        self._lock = threading.Lock()
        for store in list(self._built):
            store.after_fork()


registry = StoreRegistry()
on_settings_changed(registry.forget)
os.register_at_fork(after_in_child=registry.after_fork)


def get_store(family: Family, choice: str | None = None) -> Any:
    """The store of ``family`` the settings choose (or ``choice``)."""
    return registry.get(family, choice)
