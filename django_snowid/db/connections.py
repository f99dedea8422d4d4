"""Connections of our own, in autocommit outside the caller's transaction, for what must
outlive its rollback: :func:`on_own_connection` (closed after each call) and
:func:`own_connection` (kept per thread and database)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import connections

from .private import close_if_unusable, new_connection

__all__ = ["close_own_connections", "on_own_connection", "own_connection"]

T = TypeVar("T")


def on_own_connection(function: Callable[[], T]) -> T:
    """Run ``function`` in a thread of its own, on autocommit connections closed after it."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, function()))
        except BaseException as exc:
            outcome.append((False, exc))
        finally:
            connections.close_all()  # this thread's own connections only

    thread = threading.Thread(target=run, name="snowid-lease-db", daemon=True)
    thread.start()
    thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


_local = threading.local()


def own_connection(alias: str) -> Any:
    """This thread's own autocommit connection to the database ``alias``."""

    own: dict[str, tuple[int, Any]] | None = getattr(_local, "connections", None)
    if own is None:
        own = _local.connections = {}
    entry = own.get(alias)
    if entry is None or entry[0] != os.getpid():
        entry = own[alias] = (os.getpid(), new_connection(alias))
    connection = entry[1]
    close_if_unusable(connection)
    return connection


def close_own_connections() -> None:
    """Close this thread's own connections (before dropping a database, say)."""
    for pid, connection in getattr(_local, "connections", {}).values():
        if pid == os.getpid():
            connection.close()
    _local.connections = {}
