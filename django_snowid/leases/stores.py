"""Where worker-id leases live: Redis or lock files on this host (the database store,
the default, is in ``database``).

Every store hands out the lowest free worker id of a pool atomically, renews and releases
it for the holder that owns its token, and remembers per worker id the highest tick its
holders may have issued (``tick bound``), also after the lease is gone: a new holder must
not issue at or below it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import socket
import threading
from dataclasses import dataclass
from typing import Any, Final, Protocol

from ..exceptions import WorkerIdUnavailable, WorkerPoolExhausted

__all__ = [
    "Acquired",
    "LeaseInfo",
    "LeaseStore",
    "RedisLeaseStore",
    "SlotStore",
    "StoreSettling",
    "exhausted",
]


class StoreSettling(Exception):
    """The store lost its records (or never had any) less than a lease's time-to-live
    plus fencing margin ago: a holder from before may still issue under any worker id
    until it re-asserts its lease or fences itself. Ask again after ``wait_ms``."""

    def __init__(self, wait_ms: int) -> None:
        super().__init__(wait_ms)
        self.wait_ms = wait_ms


@dataclass(frozen=True)
class Acquired:
    worker: int  # the leased value, 0 <= worker < pool size
    tick_bound: int  # highest tick previous holders may have used; -1 if none known
    bound_is_ms: bool = False  # the bound is a Unix time in ms (slots), not a raw tick


@dataclass(frozen=True)
class LeaseInfo:
    pool: str
    worker: int
    owner: str
    acquired_ms: int
    expires_ms: int
    tick_bound: int


class LeaseStore(Protocol):
    name: str

    def acquire(
        self, pool: str, size: int, owner: str, token: str, ttl_ms: int, *, first: int = 0
    ) -> Acquired: ...

    def renew(self, pool: str, worker: int, token: str, ttl_ms: int, tick_bound: int) -> bool: ...

    def release(self, pool: str, worker: int, token: str, tick_bound: int) -> None: ...

    def leases(self, pool: str | None = None) -> list[LeaseInfo]: ...


def exhausted(pool: str, size: int, live: int) -> WorkerPoolExhausted:
    return WorkerPoolExhausted(
        f"Worker-id pool {pool!r} is exhausted: all {size} worker ids are leased "
        f"({live} live leases). Stop some processes, wait for dead ones' leases to expire, "
        "or use a layout with more node bits (SNOWID_WORKER_POOL_SIZE limits the pool)."
    )


# ---------------------------------------------------------------------- Redis
# KEYS[1]: the pool, a hash: "<id>" -> "owner|token|expires_ms|acquired_ms",
#          "tick:<id>" -> the highest tick holders of <id> may have used (kept forever),
#          "since" -> when (Redis time, ms) this hash was last found missing: the store
#          lost its records then (FLUSHALL, a restart without persistence) or never had
#          any. Until "since" + grace, a missing record proves nothing: a live holder may
#          not have re-asserted its lease yet.
# Acquire. ARGV: pool size, ttl_ms, token, owner, grace_ms (ttl + fencing margin: by then
# every holder from before the loss has re-asserted its lease or fenced itself), first
# (the ids tried are first .. first + size - 1).
# Returns {id, tick_bound or -1}; {-1, live leases} when the pool is full; {-2, id}
# garbage; {-3, ms} when the store lost its records less than grace_ms ago: come back
# after ms.
ACQUIRE_LUA: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local size, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
local grace = tonumber(ARGV[5])
local since = tonumber(redis.call('HGET', KEYS[1], 'since') or '')
if not since then
  since = now
  redis.call('HSET', KEYS[1], 'since', now)
end
if now - since < grace then return {-3, since + grace - now} end
local live = 0
local first = tonumber(ARGV[6])
for id = first, first + size - 1 do
  local v = redis.call('HGET', KEYS[1], tostring(id))
  local free = true
  if v then
    local expires = tonumber(string.match(v, '^[^|]*|[^|]*|([^|]*)|'))
    if not expires then return {-2, id} end
    if expires > now then free = false; live = live + 1 end
  end
  if free then
    local lease = ARGV[4] .. '|' .. ARGV[3] .. '|' .. (now + ttl) .. '|' .. now
    redis.call('HSET', KEYS[1], tostring(id), lease)
    local bound = tonumber(redis.call('HGET', KEYS[1], 'tick:' .. id) or '-1') or -1
    return {id, bound}
  end
end
return {-1, live}
"""

# Renew (ARGV: id, token, ttl_ms, tick_bound, owner) or release (ttl_ms = 0). Returns 1
# if this token held a lease that had not expired (renewed or released), or if the
# lease's record is gone (the store lost it): nobody else holds the id, so the holder
# re-asserts it with its own horizon. Returns 0, writing nothing, when another holder
# has the id or this lease expired: a lost lease must not raise the id's tick bound.
RENEW_LUA: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id, token, ttl, bound = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local v = redis.call('HGET', KEYS[1], id)
local owner, acquired = ARGV[5], now
if v then
  local held, expires
  owner, held, expires, acquired = string.match(v, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  if held ~= token or tonumber(expires) <= now then return 0 end
elseif not redis.call('HGET', KEYS[1], 'since') then
  redis.call('HSET', KEYS[1], 'since', now)
end
local old = tonumber(redis.call('HGET', KEYS[1], 'tick:' .. id) or '-1') or -1
if bound > old then redis.call('HSET', KEYS[1], 'tick:' .. id, bound) end
if ttl == 0 then
  redis.call('HDEL', KEYS[1], id)
else
  redis.call('HSET', KEYS[1], id, owner .. '|' .. token .. '|' .. (now + ttl) .. '|' .. acquired)
end
return 1
"""

_LUA: Final = {hashlib.sha1(s.encode()).hexdigest(): s for s in (ACQUIRE_LUA, RENEW_LUA)}
ACQUIRE_SHA, RENEW_SHA = list(_LUA)


class RedisLeaseStore:
    name = "redis"

    def __init__(self, alias: str, prefix: str) -> None:
        self.alias = alias
        self.prefix = prefix

    def key(self, pool: str) -> str:
        return f"{{{self.prefix}:workers:{pool}}}"

    def _client(self) -> Any:
        from django_redis import get_redis_connection

        try:
            return get_redis_connection(self.alias)
        except NotImplementedError:
            raise WorkerIdUnavailable(
                f"The cache alias {self.alias!r} (SNOWID_REDIS_ALIAS) is not a django-redis cache."
            ) from None

    def _run(self, sha: str, pool: str, args: list[Any]) -> Any:
        import redis

        client = self._client()
        try:
            try:
                return client.evalsha(sha, 1, self.key(pool), *args)
            except redis.exceptions.NoScriptError:
                client.script_load(_LUA[sha])
                return client.evalsha(sha, 1, self.key(pool), *args)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            raise WorkerIdUnavailable(
                f"Redis (cache alias {self.alias!r}) is unreachable for worker-id leases: {exc}"
            ) from exc
        except redis.exceptions.ResponseError as exc:
            raise WorkerIdUnavailable(
                f"Redis refused the worker-id pool key {self.key(pool)!r}: {exc}"
            ) from exc

    def acquire(
        self, pool: str, size: int, owner: str, token: str, ttl_ms: int, *, first: int = 0
    ) -> Acquired:
        # A holder fences itself a margin before its lease expires (holder.WorkerLease).
        grace = ttl_ms + min(ttl_ms // 3, 2000)
        answer = self._run(ACQUIRE_SHA, pool, [size, ttl_ms, token, owner, grace, first])
        worker, other = int(answer[0]), int(answer[1])
        if worker == -3:
            raise StoreSettling(other)
        if worker == -1:
            raise exhausted(pool, size, other)
        if worker == -2:
            raise WorkerIdUnavailable(
                f"The worker-id lease {other} in the Redis key {self.key(pool)!r} is garbage "
                "(expected 'owner|token|expires_ms|acquired_ms'). Delete that field."
            )
        return Acquired(worker, other)

    def renew(self, pool: str, worker: int, token: str, ttl_ms: int, tick_bound: int) -> bool:
        owner = f"{socket.gethostname()}:{os.getpid()}"
        return bool(self._run(RENEW_SHA, pool, [worker, token, ttl_ms, tick_bound, owner]))

    def release(self, pool: str, worker: int, token: str, tick_bound: int) -> None:
        self.renew(pool, worker, token, 0, tick_bound)

    def leases(self, pool: str | None = None) -> list[LeaseInfo]:
        client = self._client()
        keys = [self.key(pool)] if pool else list(client.scan_iter(match=self.key("*")))
        found = []
        for key in keys:
            name = key.decode() if isinstance(key, bytes) else key
            name = name[len(f"{{{self.prefix}:workers:") : -1]
            fields = client.hgetall(self.key(name))
            ticks = {k.decode(): int(v) for k, v in fields.items() if k.startswith(b"tick:")}
            for field, value in fields.items():
                if field.startswith(b"tick:") or field == b"since":
                    continue
                owner, _token, expires, acquired = value.decode().split("|")
                worker = int(field)
                found.append(
                    LeaseInfo(
                        name,
                        worker,
                        owner,
                        int(acquired),
                        int(expires),
                        ticks.get(f"tick:{worker}", -1),
                    )
                )
        return sorted(found, key=lambda lease: (lease.pool, lease.worker))


# ---------------------------------------------------------------------- slots
class SlotStore:
    """Host-local slots: an exclusive ``flock`` on one of N files in a directory.

    Unique among the processes of one host; the kernel releases a slot the moment its
    process dies, so there is nothing to renew. Each file also keeps the tick bound of
    its holders.
    """

    name = "slot"

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._files: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()

    def _path(self, pool: str, worker: int) -> str:
        safe = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in pool)
        return os.path.join(self.directory, f"{safe}.{worker}.lock")

    def acquire(
        self, pool: str, size: int, owner: str, token: str, ttl_ms: int, *, first: int = 0
    ) -> Acquired:
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise WorkerIdUnavailable(
                f"Cannot create the slot directory {self.directory}: {exc}"
            ) from exc
        for worker in range(first, first + size):
            fd = os.open(self._path(pool, worker), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            data = os.pread(fd, 64, 0).decode(errors="replace").split()
            text = data[0] if data else ""
            with self._lock:
                self._files[(pool, worker)] = fd
            if text.startswith("@") and text[1:].isdigit():  # "@<unix ms>"
                return Acquired(worker, int(text[1:]), bound_is_ms=True)
            # A raw tick (written by an earlier version): read in this layout.
            return Acquired(worker, int(text) if text.lstrip("-").isdigit() else -1)
        raise exhausted(pool, size, size)

    def renew(self, pool: str, worker: int, token: str, ttl_ms: int, tick_bound: int) -> bool:
        fd = self._files.get((pool, worker))
        if fd is None:
            return False
        os.pwrite(fd, f"@{tick_bound:<20d}\n".encode(), 0)
        return True

    def release(self, pool: str, worker: int, token: str, tick_bound: int) -> None:
        if self.renew(pool, worker, token, 0, tick_bound):
            with self._lock:
                fd = self._files.pop((pool, worker))
            os.close(fd)  # releases the lock

    def forget_after_fork(self) -> None:
        # The child's copies of the parent's files: closing them does not release the
        # parent's locks (a flock lives while any descriptor of the open file does), and
        # keeping them would hold the parent's slots after the parent died.
        for fd in self._files.values():
            os.close(fd)
        self._files = {}
        self._lock = threading.Lock()

    def leases(self, pool: str | None = None) -> list[LeaseInfo]:
        return []
