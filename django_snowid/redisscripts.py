"""One way to run a Lua script on Redis: by SHA, loaded once, reloaded after a restart.

A :class:`RedisScript` is a module constant made of the script's source. Calling it with
a redis-py client, the keys and the arguments sends one ``EVALSHA``; on ``NOSCRIPT`` (a
new server, one that restarted or ran ``SCRIPT FLUSH``) it loads the script and sends it
again. The source never travels with a call.

Each thread of each process keeps one connection per client (made with the client's
connection settings, outside its pool): a call costs the round trip and no pool checkout.
A forked child opens connections of its own, never reusing its parent's sockets.

``redis`` is imported on first use only: a project without Redis never imports it.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from typing import Any

from .exceptions import SnowidError

__all__ = ["RedisScript", "RedisUnavailable"]


class RedisUnavailable(SnowidError):
    """Redis is unreachable (refused, timed out, or the connection broke twice in a row)."""


_local = threading.local()


def _connection(client: Any) -> Any:
    """This thread's connection for ``client`` (a new one in a forked child)."""
    pool = client.connection_pool
    connections: dict[int, tuple[Any, int, Any]] | None = getattr(_local, "connections", None)
    if connections is None:
        connections = _local.connections = {}
    entry = connections.get(id(pool))
    if entry is None or entry[0] is not pool or entry[1] != os.getpid():
        entry = connections[id(pool)] = (
            pool,
            os.getpid(),
            pool.connection_class(**pool.connection_kwargs),
        )
    return entry[2]


def _drop(client: Any) -> None:
    entry = getattr(_local, "connections", {}).pop(id(client.connection_pool), None)
    if entry is not None and entry[1] == os.getpid():
        entry[2].disconnect()


class RedisScript:
    """A Lua script, called by SHA. ``script(client, keys, args)`` returns its reply."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    def __repr__(self) -> str:
        return f"<RedisScript {self.sha[:12]}>"

    def __call__(self, client: Any, keys: Sequence[Any], args: Sequence[Any] = ()) -> Any:
        import redis

        loaded = False
        failures = 0
        while True:
            try:
                connection = _connection(client)
                connection.send_command("EVALSHA", self.sha, len(keys), *keys, *args)
                return connection.read_response()
            except redis.exceptions.NoScriptError:
                if loaded:  # loaded and gone at once: do not loop
                    raise RedisUnavailable(f"Redis keeps forgetting script {self.sha}.") from None
                connection.send_command("SCRIPT", "LOAD", self.source)
                connection.read_response()
                loaded = True
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
                # A connection made before a Redis restart breaks on its first use: one
                # more try on a new one. Running a script again that did run may cost a
                # gap in what it counts, never a repeat.
                _drop(client)
                failures += 1
                if failures == 2:
                    raise RedisUnavailable(f"Redis is unreachable: {exc}") from exc
