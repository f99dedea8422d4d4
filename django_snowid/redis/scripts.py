"""One way to run a Lua script on Redis: by SHA, loaded once, reloaded after a restart.

A :class:`RedisScript` is a module constant made of the script's source. Calling it with
a redis-py client, the keys and the arguments sends one ``EVALSHA``; on ``NOSCRIPT`` (a
new server, one that restarted or ran ``SCRIPT FLUSH``) it loads the script and sends it
again. The source never travels with a call.

The client may be a plain ``redis.Redis`` (django-redis's, including one whose pool is a
Sentinel pool) or a ``redis.cluster.RedisCluster``. On a cluster the call goes to the
primary of the keys' slot (every key of one call shares a hash tag), follows ``MOVED``
(and updates the client's slot map) and ``ASK`` (one ``ASKING`` on the importing node),
waits out ``TRYAGAIN`` during a migration, and loads the script on each node that lacks it.

Each thread of each process keeps one connection per server (made with the client's
connection settings, outside its pool): a call costs the round trip and no pool checkout.
A forked child opens connections of its own, never reusing its parent's sockets. These
connections never reconnect on their own (redis-py's retries are off for them): a broken
one is dropped, and the next is a new connection, behind a Sentinel asked again.

**Server identity.** A script made with ``server_id=True`` receives, as its last argument,
the ``run_id`` of the server that runs it (read once per connection). A store writes it
next to its state and compares it on every call: a different one means the state may have
been written by another server (a replica promoted by a failover, a restart, a slot
migrated), which may have lagged behind what was issued, so the store re-syncs from its
database mark before issuing anything. See the docs page "Redis" (docs/redis.rst).

``redis`` is imported on first use only: a project without Redis never imports it.

**Why not redis-py's own** ``Script`` (``client.register_script()``), which loads scripts,
and on a ``RedisCluster`` follows redirects, too. Measured (``benchmarks/bench_scripts.py``,
one run, loopback Redis 7.0, 20,000 calls x 5, load average 2.9-3.7): an EVALSHA through
redis-py's ``Script`` and the client's pool took 149.5 µs a call; this runner 69.8 µs
(0.46x the time, 0.41-0.47 over the repeats), 74.4 µs with ``server_id`` (0.48x): the
pool's checkout and its health check of the socket cost more than the round trip. And
redis-py cannot say which server ran a call: a pooled connection that reconnects by itself
may reach another server (a new primary) between a ``run_id`` read and the script, so the
identity would have to come from the script itself, ``INFO server`` read in Lua, which
cost 1.22x redis-py's plain ``Script`` (1.11-1.27) in the same run, 2.5x this runner. So
the runner stays: one connection a thread and server, no silent reconnection, the
server's ``run_id`` read once per connection.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..exceptions import RedisUnavailable

__all__ = ["RedisScript", "server_id"]


_local = threading.local()

# Redirections one call may follow, and TRYAGAIN replies it waits out (10 ms apart at
# first), before giving up with RedisUnavailable.
MAX_REDIRECTS = 16
MAX_TRYAGAIN = 100


class _Link:
    """This thread's connection to one server, and what it learned about that server."""

    __slots__ = ("connection", "pid", "pool", "server_id")

    def __init__(self, pool: Any) -> None:
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self.pool = pool
        self.pid = os.getpid()
        # No silent reconnection: a connection that reconnected by itself could reach
        # another server (a new primary) while we still hold the old one's identity.
        kwargs = dict(pool.connection_kwargs, retry=Retry(NoBackoff(), 0))
        kwargs.pop("retry_on_error", None)
        kwargs.pop("retry_on_timeout", None)
        self.connection = pool.connection_class(**kwargs)
        self.server_id: str | None = None
        # Connect now, as a pool does: a Sentinel-managed connection asks the Sentinels for
        # the primary in connect() (a lazy connect on first send would not).
        self.connection.connect()


def _link(server: Any) -> _Link:
    """This thread's link for the redis-py client ``server`` (a new one in a forked child)."""
    pool = server.connection_pool
    links: dict[int, _Link] | None = getattr(_local, "links", None)
    if links is None:
        links = _local.links = {}
    link = links.get(id(pool))
    if link is None or link.pool is not pool or link.pid != os.getpid():
        link = links[id(pool)] = _Link(pool)
    return link


def _drop(server: Any) -> None:
    link = getattr(_local, "links", {}).pop(id(server.connection_pool), None)
    if link is not None and link.pid == os.getpid():
        link.connection.disconnect()


def _read_server_id(link: _Link) -> str:
    if link.server_id is None:
        link.connection.send_command("INFO", "server")
        info = link.connection.read_response()
        if isinstance(info, bytes):
            info = info.decode()
        for line in str(info).splitlines():
            if line.startswith("run_id:"):
                link.server_id = line[7:].strip()
                break
        else:  # a proxy that hides INFO: no identity, every connection is a new server
            link.server_id = f"unknown-{os.getpid()}-{os.urandom(8).hex()}"
    return link.server_id


def server_id(client: Any, key: Any) -> str:
    """The ``run_id`` of the server that holds ``key``, asked now through this thread's
    link. Not the link's remembered one: that may be a server that has gone away (a
    restart on the same address), which a script call finds out only when it sends."""
    import redis

    server = _target(client, key)
    try:
        link = _link(server)
        link.server_id = None
        return _read_server_id(link)
    except redis.exceptions.ConnectionError:
        _drop(server)  # the link's server went away: one more try, on a new link
        return _read_server_id(_link(server))


def _is_cluster(client: Any) -> bool:
    return hasattr(client, "nodes_manager") and hasattr(client, "keyslot")


def _target(client: Any, key: Any) -> Any:
    """The redis-py client of the server that serves ``key`` (``client`` itself unless
    ``client`` is a cluster: then its node client for the primary of the key's slot)."""
    if not _is_cluster(client):
        return client
    node = client.nodes_manager.get_node_from_slot(client.keyslot(key))
    return client.get_redis_connection(node)


def _node_client(client: Any, host: str, port: int) -> Any:
    from redis.cluster import ClusterNode

    node = client.nodes_manager.get_node(host=host, port=port) or ClusterNode(host, port)
    return client.get_redis_connection(node)


def _refresh(client: Any) -> None:
    """Re-read a cluster's slot map after a node failed (best effort: the retry tells)."""
    if _is_cluster(client):
        # Every node unreachable: the next attempt reports it.
        with contextlib.suppress(Exception):
            client.nodes_manager.initialize()


class RedisScript:
    """A Lua script, called by SHA. ``script(client, keys, args)`` returns its reply."""

    def __init__(self, source: str, *, server_id: bool = False) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
        self.server_id = server_id

    def __repr__(self) -> str:
        return f"<RedisScript {self.sha[:12]}>"

    def __call__(self, client: Any, keys: Sequence[Any], args: Sequence[Any] = ()) -> Any:
        import redis

        errors = redis.exceptions
        loaded: set[int] = set()
        failures = redirects = tries = 0
        server: Any = None
        asking = False
        while True:
            try:
                if server is None:
                    server = _target(client, keys[0]) if keys else client
                link = _link(server)
                connection = link.connection
                extra = (_read_server_id(link),) if self.server_id else ()
                if asking:
                    connection.send_command("ASKING")
                    connection.read_response()
                connection.send_command("EVALSHA", self.sha, len(keys), *keys, *args, *extra)
                return connection.read_response()
            except errors.NoScriptError:
                if id(server) in loaded:  # loaded and gone at once: do not loop
                    raise RedisUnavailable(f"Redis keeps forgetting script {self.sha}.") from None
                connection.send_command("SCRIPT", "LOAD", self.source)
                connection.read_response()
                loaded.add(id(server))
            except errors.AskError as exc:  # MOVED is an AskError too
                redirects += 1
                if redirects > MAX_REDIRECTS:
                    raise RedisUnavailable(
                        f"Redis Cluster keeps redirecting slot {exc.slot_id}: {exc}"
                    ) from None
                moved = isinstance(exc, errors.MovedError)
                if moved:
                    # Slot map: the new owner from now on, for every call of this client.
                    client.nodes_manager.move_slot(exc)
                server = _node_client(client, exc.host, int(exc.port))
                asking = not moved
            except errors.TryAgainError:
                # A migration moved some keys of the slot and not others: it ends soon.
                tries += 1
                if tries > MAX_TRYAGAIN:
                    raise RedisUnavailable(
                        "Redis Cluster answered TRYAGAIN for a second (a slot migration "
                        "that does not end)."
                    ) from None
                time.sleep(min(0.01 * tries, 0.05))
                server, asking = None, False
            except errors.RedisClusterException as exc:  # a slot no node serves
                raise RedisUnavailable(f"Redis Cluster cannot serve the call: {exc}") from exc
            except (
                errors.ConnectionError,
                errors.TimeoutError,
                errors.ReadOnlyError,  # a demoted primary: its successor is elsewhere
                errors.ClusterDownError,
            ) as exc:
                # A connection made before a Redis restart breaks on its first use: one
                # more try on a new one (behind a Sentinel, to the primary it names now;
                # on a cluster, after re-reading the slot map). Running a script again
                # that did run may cost a gap in what it counts, never a repeat.
                if server is not None:
                    _drop(server)
                failures += 1
                if failures == 2:
                    raise RedisUnavailable(str(exc)) from exc
                _refresh(client)
                server, asking = None, False
