"""The one runner of our Lua scripts (docs/redis.rst "How calls travel"), and
:class:`RedisCalls`, where a store's redis-py errors become the family's exceptions."""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

from ..exceptions import RedisClientError, RedisUnavailable, SnowidError
from . import redis_client
from .base import StoreErrors

__all__ = ["RedisCalls", "RedisScript", "server_id"]

R = TypeVar("R")


_local = threading.local()

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
        # No silent reconnection: it could reach another server than the one we identified.
        kwargs = dict(pool.connection_kwargs, retry=Retry(NoBackoff(), 0))
        kwargs.pop("retry_on_error", None)
        kwargs.pop("retry_on_timeout", None)
        self.connection = pool.connection_class(**kwargs)
        self.server_id: str | None = None
        # Connect now, as a pool does: behind Sentinel, connect() asks for the primary.
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
    """The ``run_id`` of the server that holds ``key``, asked now, not remembered."""
    import redis

    server = _target(client, key)
    try:
        link = _link(server)
        link.server_id = None
        return _read_server_id(link)
    except redis.exceptions.ConnectionError:
        _drop(server)
        return _read_server_id(_link(server))


def _is_cluster(client: Any) -> bool:
    return hasattr(client, "nodes_manager") and hasattr(client, "keyslot")


def _target(client: Any, key: Any) -> Any:
    """The redis-py client of the server of ``key`` (on a cluster: its slot's primary)."""
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
        with contextlib.suppress(Exception):
            client.nodes_manager.initialize()


class RedisScript(Generic[R]):
    """A Lua script, called by SHA: ``script(client, keys, args)`` returns its reply, read
    by ``reply`` when given."""

    @overload
    def __init__(
        self: RedisScript[Any], source: str, *, server_id: bool = False, reply: None = None
    ) -> None: ...

    @overload
    def __init__(
        self: RedisScript[R], source: str, *, server_id: bool = False, reply: Callable[[Any], R]
    ) -> None: ...

    def __init__(
        self, source: str, *, server_id: bool = False, reply: Callable[[Any], R] | None = None
    ) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
        self.server_id = server_id
        self.reply = reply

    def __repr__(self) -> str:
        return f"<RedisScript {self.sha[:12]}>"

    def __call__(self, client: Any, keys: Sequence[Any], args: Sequence[Any] = ()) -> R:
        import redis

        errors = redis.exceptions
        loaded: set[int] = set()
        failures = redirects = tries = 0
        server: Any = None
        asking = load = False
        while True:
            try:
                if server is None:
                    server = _target(client, keys[0]) if keys else client
                link = _link(server)
                connection = link.connection
                if load:  # here, not in the NOSCRIPT handler: its broken link is retried
                    connection.send_command("SCRIPT", "LOAD", self.source)
                    connection.read_response()
                    loaded.add(id(server))
                    load = False
                extra = (_read_server_id(link),) if self.server_id else ()
                if asking:
                    connection.send_command("ASKING")
                    connection.read_response()
                connection.send_command("EVALSHA", self.sha, len(keys), *keys, *args, *extra)
                reply = connection.read_response()
                return reply if self.reply is None else self.reply(reply)
            except errors.NoScriptError:
                if id(server) in loaded:  # loaded and gone at once: do not loop
                    raise RedisUnavailable(f"Redis keeps forgetting script {self.sha}.") from None
                load = True
            except errors.AskError as exc:  # MOVED is an AskError too
                redirects += 1
                if redirects > MAX_REDIRECTS:
                    raise RedisUnavailable(
                        f"Redis Cluster keeps redirecting slot {exc.slot_id}: {exc}"
                    ) from None
                moved = isinstance(exc, errors.MovedError)
                if moved:
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
                # One more try on a new connection (a restart, a failover, a slot map
                # changed): a script run twice may leave a gap, never a repeat.
                if server is not None:
                    _drop(server)
                loaded.clear()  # the next connection may reach a server restarted empty
                failures += 1
                if failures == 2:
                    raise RedisUnavailable(str(exc)) from exc
                _refresh(client)
                server, asking = None, False


_UNAVAILABLE: tuple[type[BaseException], ...] = ()
_REFUSED: tuple[type[BaseException], ...] = ()


def _classes() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    global _UNAVAILABLE, _REFUSED
    if not _UNAVAILABLE:
        from redis import exceptions as e

        _REFUSED = (e.ResponseError, e.DataError, e.InvalidResponse)
        _UNAVAILABLE = (
            RedisUnavailable,
            e.ConnectionError,
            e.TimeoutError,
            e.ReadOnlyError,
            e.ClusterError,  # ClusterDownError, MasterDownError (a replica without primary)
            e.TryAgainError,
            e.AskError,
            e.OutOfMemoryError,
            e.RedisClusterException,
        )
    return _UNAVAILABLE, _REFUSED


class RedisCalls:
    """A store's calls to our Redis, its scripts and plain commands: every redis-py error
    becomes the family's exception here, and nowhere else."""

    def __init__(self, errors: StoreErrors) -> None:
        self.errors = errors

    @property
    def client(self) -> Any:
        """The client of the settings in force (a holder outlives a change of them)."""
        try:
            return redis_client.get_client()
        except RedisClientError as exc:
            raise self.errors.refused(str(exc)) from None

    def describe(self) -> str:
        return f"Redis ({redis_client.describe()})"

    def run(self, script: RedisScript[R], keys: Sequence[str], args: Sequence[Any] = ()) -> R:
        """``script``'s reply on ``keys``, as its ``reply`` reads it."""
        try:
            return script(self.client, keys, args)
        except Exception as exc:
            ours = self._ours(exc, keys[0] if keys else None)
            if ours is None:
                raise
            raise ours from exc

    def command(self, name: str, *args: Any, key: str | None = None, **kwargs: Any) -> Any:
        """``client.<name>(*args, **kwargs)``; an iterator's items as a list (``scan_iter``)."""
        try:
            reply = getattr(self.client, name)(*args, **kwargs)
            return list(reply) if isinstance(reply, Iterator) else reply
        except Exception as exc:
            ours = self._ours(exc, key)
            if ours is None:
                raise
            raise ours from exc

    def _ours(self, exc: BaseException, key: str | None = None) -> SnowidError | None:
        """The family's exception for the redis-py error ``exc`` (None for anything else)."""
        unavailable, refused = _classes()
        errors = self.errors
        if isinstance(exc, unavailable):
            where = redis_client.describe()
            return errors.unavailable(
                errors.unreachable.format(where=where, error=str(exc).rstrip("."))
            )
        if isinstance(exc, refused):
            return errors.refused(errors.bad_key.format(key=key, error=exc))
        return None
