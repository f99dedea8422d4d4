"""Worker-id leases in Redis: a hash per pool, changed only by two Lua scripts.

``redis`` and ``django_redis`` are imported on first use only, so a project whose
leases live elsewhere never imports them.
"""

from __future__ import annotations

import os
import socket
from typing import Any, Final

from ... import redisclient
from ...exceptions import WorkerIdUnavailable
from ...redisscripts import RedisScript, RedisUnavailable
from .base import Acquired, LeaseInfo, StoreSettling, exhausted

__all__ = ["RedisLeaseStore"]

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
ACQUIRE: Final = RedisScript("""
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
""")

# Renew (ARGV: id, token, ttl_ms, tick_bound, owner) or release (ttl_ms = 0). Returns 1
# if this token held a lease that had not expired (renewed or released), or if the
# lease's record is gone (the store lost it): nobody else holds the id, so the holder
# re-asserts it with its own horizon. Returns 0, writing nothing, when another holder
# has the id or this lease expired: a lost lease must not raise the id's tick bound.
RENEW: Final = RedisScript("""
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
""")


class RedisLeaseStore:
    name = "redis"

    def __init__(self, alias: str, prefix: str) -> None:
        self.alias = alias
        self.prefix = prefix

    def key(self, pool: str) -> str:
        return f"{{{self.prefix}:workers:{pool}}}"

    def _client(self) -> Any:
        """Our Redis client (:func:`django_snowid.redisclient.get_client`), its errors ours."""
        try:
            return redisclient.get_client()
        except redisclient.RedisClientError as exc:
            raise WorkerIdUnavailable(str(exc)) from None

    def _run(self, script: RedisScript, pool: str, args: list[Any]) -> Any:
        import redis  # the Redis stores only: lazy

        try:
            return script(self._client(), [self.key(pool)], args)
        except RedisUnavailable as exc:
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
        # A holder fences itself a margin before its lease expires (lease.LeaseHolder).
        grace = ttl_ms + min(ttl_ms // 3, 2000)
        answer = self._run(ACQUIRE, pool, [size, ttl_ms, token, owner, grace, first])
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
        return bool(self._run(RENEW, pool, [worker, token, ttl_ms, tick_bound, owner]))

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
