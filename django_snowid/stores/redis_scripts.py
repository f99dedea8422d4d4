"""The one runner of our Lua scripts (docs/redis.rst "How calls travel"), and
:class:`RedisCalls`, where a store's redis-py errors become the family's exceptions."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, Generic, TypeVar, overload

from ..exceptions import RedisClientError, RedisUnavailable, SnowidError
from . import redis_client
from .base import StoreErrors

__all__ = ["IDENTITY_LUA", "IDENTITY_UNKNOWN", "RedisCalls", "RedisScript", "server_id"]

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
        self.server_id: str | None = None  # what scripts get: the run_id, or "" (a proxy)
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


class _Direct:
    """The redis-py client ``server``'s commands, sent once over this thread's link to it:
    no retries of redis-py's (seconds of them on an outage), an outage answered at once."""

    __slots__ = ("server",)

    def __init__(self, server: Any) -> None:
        self.server = server

    def execute_command(self, *args: Any, **options: Any) -> Any:
        from redis import exceptions as e

        try:
            connection = self._connection()
            connection.send_command(*args, **options)
            return self.server.parse_response(connection, args[0], **options)
        except (e.ConnectionError, e.TimeoutError):
            _drop(self.server)
            raise

    def _connection(self) -> Any:
        """The link's connection; a new link's if the server closed it (a restart)."""
        from redis import exceptions as e

        connection = _link(self.server).connection
        try:
            stale = connection.can_read()  # unread data, or the end of the stream
        except (e.ConnectionError, e.TimeoutError, OSError):
            stale = True
        if stale:
            _drop(self.server)
            connection = _link(self.server).connection
        return connection

    def __getattr__(self, name: str) -> Any:
        return functools.partial(getattr(type(self.server), name), self)


#: What a script declared with ``server_id=True`` starts with: ``SERVER_ID``, the
#: ``run_id`` of the server it runs on: its last argument, or ("" behind a proxy) read here.
IDENTITY_LUA: Final = """
local SERVER_ID = ARGV[#ARGV]
if SERVER_ID == '' then
  local info = redis.pcall('INFO', 'server')
  SERVER_ID = type(info) == 'string' and string.match(info, 'run_id:(%x+)') or nil
  if not SERVER_ID then
    return redis.error_reply('SNOWID-NO-IDENTITY INFO is refused inside scripts too')
  end
end
"""
_IDENTITY: Final = "return string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')"
_NO_IDENTITY: Final = "SNOWID-NO-IDENTITY"


def _server_id(link: _Link) -> str:
    """The last argument of the link's scripts: the server's ``run_id``, or ""."""
    if link.server_id is None:
        link.server_id = _identify(link)
    return link.server_id


def _identify(link: _Link) -> str:
    """The ``run_id`` INFO answers over the connection, when a script (of no key: it runs
    where the connection goes) reads the same; else "" (a proxy)."""
    import redis

    connection = link.connection
    try:
        connection.send_command("INFO", "server")
        answered = _run_id(connection.read_response())
    except redis.exceptions.ResponseError:
        return ""  # refused: an unknown or renamed command
    except redis.exceptions.ConnectionError:  # dropped by a proxy (or broken: reconnected)
        connection.disconnect()
        connection.connect()
        return ""
    try:
        connection.send_command("EVAL", _IDENTITY, 0)
        seen = connection.read_response()
    except redis.exceptions.ResponseError:
        return ""
    seen = seen.decode() if isinstance(seen, bytes) else seen
    return answered if answered is not None and answered == seen else ""


def _run_id(info: Any) -> str | None:
    text = info.decode() if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith("run_id:"):
            return line[7:].strip()
    return None


IDENTITY_UNKNOWN: Final = "it does not say which server it is"


def _hidden_identity(error: str) -> str:
    return (
        f"{IDENTITY_UNKNOWN}: INFO is refused over the connection and "
        f"inside scripts ({error}). A failover or a restart could not be told from the "
        "same server, so nothing is issued through it: allow INFO at least inside scripts "
        "(redis.call('INFO', 'server')), or reach Redis without the proxy"
    )


def server_id(client: Any, key: Any) -> str:
    """The ``run_id`` of the server that holds ``key``, as its scripts see it, asked now."""
    reply: Any = _WHO(client, (key,))
    return reply.decode() if isinstance(reply, bytes) else str(reply)


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


class _Call:
    """One script call on its way: the server it goes to, and its troubles so far."""

    __slots__ = (
        "asking",
        "client",
        "failures",
        "key",
        "load",
        "loaded",
        "redirects",
        "sent",
        "server",
        "tries",
    )

    def __init__(self, client: Any, key: Any) -> None:
        self.client, self.key = client, key
        self.server: Any = None
        self.asking = self.load = self.sent = False
        self.loaded: set[int] = set()
        self.failures = self.redirects = self.tries = 0

    def link(self) -> _Link:
        if self.server is None:
            self.server = _target(self.client, self.key) if self.key is not None else self.client
        return _link(self.server)

    def handle(self, exc: Exception, script: RedisScript[Any]) -> bool:
        """Whether to try again after ``exc``, or :class:`RedisUnavailable`."""
        from redis import exceptions as e

        if isinstance(exc, e.NoScriptError):
            if id(self.server) in self.loaded:  # loaded and gone at once: do not loop
                raise RedisUnavailable(f"Redis keeps forgetting script {script.sha}.") from None
            self.load = True
        elif isinstance(exc, e.AskError):  # MOVED is an AskError too
            self._redirect(exc)
        elif isinstance(exc, e.TryAgainError):
            self._try_again()
        elif isinstance(exc, e.RedisClusterException):  # a slot no node serves
            raise RedisUnavailable(f"Redis Cluster cannot serve the call: {exc}") from exc
        elif isinstance(exc, e.ConnectionError | e.TimeoutError):
            if self.sent and not script.safe_to_retry:
                raise RedisUnavailable(_maybe_ran(script, exc)) from exc
            self._reconnect(exc)
        elif isinstance(exc, e.ClusterDownError):
            self._reconnect(exc)  # refused: nothing ran
        elif isinstance(exc, e.ReadOnlyError):
            self._reconnect(exc)  # a demoted primary: its successor is elsewhere
        elif isinstance(exc, e.ResponseError) and str(exc).startswith(_NO_IDENTITY):
            raise RedisUnavailable(_hidden_identity(str(exc))) from None
        else:
            return False
        return True

    def _redirect(self, exc: Any) -> None:
        from redis import exceptions as e

        self.redirects += 1
        if self.redirects > MAX_REDIRECTS:
            raise RedisUnavailable(
                f"Redis Cluster keeps redirecting slot {exc.slot_id}: {exc}"
            ) from None
        moved = isinstance(exc, e.MovedError)
        if moved:
            self.client.nodes_manager.move_slot(exc)
        self.server = _node_client(self.client, exc.host, int(exc.port))
        self.asking = not moved

    def _try_again(self) -> None:
        # A migration moved some keys of the slot and not others: it ends soon.
        self.tries += 1
        if self.tries > MAX_TRYAGAIN:
            raise RedisUnavailable(
                "Redis Cluster answered TRYAGAIN for a second (a slot migration that does not end)."
            ) from None
        time.sleep(min(0.01 * self.tries, 0.05))
        self.server, self.asking = None, False

    def _reconnect(self, exc: Exception) -> None:
        # One more try on a new connection (a restart, a failover, a slot map changed):
        # only a script declared safe_to_retry once it may have run (see RedisScript).
        if self.server is not None:
            _drop(self.server)
        self.loaded.clear()  # the next connection may reach a server restarted empty
        self.failures += 1
        if self.failures == 2:
            raise RedisUnavailable(str(exc)) from exc
        _refresh(self.client)
        self.server, self.asking = None, False


def _maybe_ran(script: RedisScript[Any], exc: Exception) -> str:
    return (
        f"{str(exc).rstrip('.')}; the connection was lost after script {script.sha[:12]} "
        "was sent, so it may have run, and it is not declared safe to run twice: not retried"
    )


class RedisScript(Generic[R]):
    """A Lua script, called by SHA: ``script(client, keys, args)`` returns its reply, read
    by ``reply`` when given; ``server_id``: it starts with :data:`IDENTITY_LUA`.

    ``safe_to_retry`` (no default: every script says) declares that the script, run twice
    with the same arguments, may leave a gap (numbers or ids nobody uses) but never hands
    out anything twice. Only such a script is sent again after a connection lost once it
    was sent (it may have run); any script is sent again after a failure before that (a
    connection that would not open, NOSCRIPT, a redirection).
    """

    @overload
    def __init__(
        self: RedisScript[Any],
        source: str,
        *,
        safe_to_retry: bool,
        server_id: bool = False,
        reply: None = None,
    ) -> None: ...

    @overload
    def __init__(
        self: RedisScript[R],
        source: str,
        *,
        safe_to_retry: bool,
        server_id: bool = False,
        reply: Callable[[Any], R],
    ) -> None: ...

    def __init__(
        self,
        source: str,
        *,
        safe_to_retry: bool,
        server_id: bool = False,
        reply: Callable[[Any], R] | None = None,
    ) -> None:
        self.source = IDENTITY_LUA + source if server_id else source
        self.sha = hashlib.sha1(self.source.encode()).hexdigest()
        self.safe_to_retry = safe_to_retry
        self.server_id = server_id
        self.reply = reply

    def __repr__(self) -> str:
        return f"<RedisScript {self.sha[:12]}>"

    def __call__(self, client: Any, keys: Sequence[Any], args: Sequence[Any] = ()) -> R:
        call = _Call(client, keys[0] if keys else None)
        while True:
            try:
                return self._send(call, keys, args)
            except Exception as exc:
                if not call.handle(exc, self):
                    raise

    def _send(self, call: _Call, keys: Sequence[Any], args: Sequence[Any]) -> R:
        call.sent = False
        link = call.link()
        connection = link.connection
        if call.load:  # here, not in the NOSCRIPT handler: its broken link is retried
            connection.send_command("SCRIPT", "LOAD", self.source)
            connection.read_response()
            call.loaded.add(id(call.server))
            call.load = False
        extra = (_server_id(link),) if self.server_id else ()
        if call.asking:
            connection.send_command("ASKING")
            connection.read_response()
        call.sent = True  # a lost connection from here on: it may have run
        connection.send_command("EVALSHA", self.sha, len(keys), *keys, *args, *extra)
        reply = connection.read_response()
        return reply if self.reply is None else self.reply(reply)


_WHO: Final = RedisScript("return SERVER_ID", safe_to_retry=True, server_id=True)

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
        """``client.<name>(*args, **kwargs)``, sent once (a cluster's client routes them);
        an iterator's items as a list (``scan_iter``)."""
        try:
            client = self.client
            sender = client if _is_cluster(client) else _Direct(client)
            reply = getattr(sender, name)(*args, **kwargs)
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
