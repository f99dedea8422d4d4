"""Connections of our own, outside the caller's transaction.

State written in the caller's transaction is rolled back with it. What must
outlive the request (a worker-id lease, a sequence's mark published to Redis) is written
on a connection of its own, in autocommit:

- :func:`on_own_connection` runs a function in a thread of its own, whose connections
  Django opens for that thread and we close when it ends: nothing stays open between
  calls (leases: a few statements a lease's lifetime);
- :func:`own_connection` keeps one connection a thread and database, open between calls
  (the marks of named sequences, raised while values are drawn); a forked child opens
  its own, and :func:`close_own_connections` closes them (before dropping a database).
"""

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
    """Run ``function`` in a thread of its own: Django gives that thread connections of
    its own, in autocommit, and we close them when it ends.

    A lease written in the caller's transaction would vanish with its rollback (the
    first id of a process is often made in ``pre_save`` inside a request's
    ``atomic()``). Nothing stays open between calls, so a fork inherits no connection
    and a test runner can drop its test database.
    """
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
    """This thread's own connection to the database ``alias`` (in autocommit, whatever
    transaction the thread's usual connection is in)."""
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
