"""Worker-id leases in Redis: a hash per pool, changed only by two Lua scripts.

``redis`` and ``django_redis`` are imported on first use only, so a project whose
leases live elsewhere never imports them.
"""

from __future__ import annotations

import logging
import os
import socket
from typing import Any, Final

from ... import metrics
from ...conf import conf
from ...exceptions import WorkerIdUnavailable
from ...stores.base import Needs
from ...stores.redis_scripts import RedisCalls, RedisScript
from . import LEASES
from .base import Acquired, LeaseInfo, LeaseRequest, StoreSettling, exhausted

logger = logging.getLogger(__name__)

__all__ = ["RedisLeaseStore"]

# KEYS[1]: the pool, a hash named after the bits its node values occupy in an id and
#          nothing a deploy changes (not SNOWID_REDIS_KEY_PREFIX: old and new processes of a
#          deploy that changes it must lease from one pool):
#          "<id>" -> "owner|token|expires_ms|acquired_ms|layout",
#          "until:<id>" -> the latest Unix ms holders of <id> may have issued in (kept forever),
#          "since" -> when (Redis time, ms) this hash was last found missing, or found
#          written by another server: the store lost its records then (FLUSHALL, a restart
#          without persistence), or a failover promoted a replica that may have lagged
#          behind the last renewals, or it never had any. Until "since" + grace, a missing
#          or expired record proves nothing: a live holder may not have re-asserted its
#          lease yet.
#          "server" -> the run_id of the server that last ran a script on this hash.
# SERVER (every script) notes a change of server: a failover, a restart, a slot moved
# (SERVER_ID: the identity of the server the script runs on, see redis_scripts).
# Acquire. ARGV: pool size, ttl_ms, token, owner, grace_ms (ttl + fencing margin: by then
# every holder from before the loss has re-asserted its lease or fenced itself), first
# (the ids tried are first .. first + size - 1), layout, the new holder's horizon_ms
# (recorded at once if above the previous holders'), SERVER_ID (added by the runner).
# Returns {id, the previous holders' horizon_ms or -1}; {-1, live leases} when the pool
# is full; {-2, id} garbage; {-3, ms, until_ms} when the store lost its records less than
# grace_ms ago: come back after ms (at until_ms, Redis's clock).
SERVER = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local known = redis.call('HGET', KEYS[1], 'server')
if known ~= SERVER_ID then
  redis.call('HSET', KEYS[1], 'server', SERVER_ID)
  if known then redis.call('HSET', KEYS[1], 'since', now) end
end
"""

ACQUIRE: Final = RedisScript(
    SERVER
    + """
local size, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
local grace = tonumber(ARGV[5])
local since = tonumber(redis.call('HGET', KEYS[1], 'since') or '')
if not since then
  since = now
  redis.call('HSET', KEYS[1], 'since', now)
end
if now - since < grace then return {-3, since + grace - now, since + grace} end
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
    local lease = ARGV[4] .. '|' .. ARGV[3] .. '|' .. (now + ttl) .. '|' .. now .. '|' .. ARGV[7]
    redis.call('HSET', KEYS[1], tostring(id), lease)
    local bound = tonumber(redis.call('HGET', KEYS[1], 'until:' .. id) or '-1') or -1
    if tonumber(ARGV[8]) > bound then redis.call('HSET', KEYS[1], 'until:' .. id, ARGV[8]) end
    return {id, bound}
  end
end
return {-1, live}
""",
    safe_to_retry=True,  # run twice: a second id; the first held by no one after its TTL
    server_id=True,
)

# Start the wait of a pool a newcomer will lease from: mark it (since) if it is missing, as
# ACQUIRE would. ARGV: grace_ms, SERVER_ID (added by the runner).
# Returns {ms left to wait (<= 0: none), until_ms}.
SETTLE: Final = RedisScript(
    SERVER
    + """
local since = tonumber(redis.call('HGET', KEYS[1], 'since') or '')
if not since then
  since = now
  redis.call('HSET', KEYS[1], 'since', now)
end
return {since + tonumber(ARGV[1]) - now, since + tonumber(ARGV[1])}
""",
    safe_to_retry=True,  # run twice: the same wait (a missing mark is set once)
    server_id=True,
)

# Renew (ARGV: id, token, ttl_ms, horizon_ms, owner, layout, grace_ms, SERVER_ID) or release
# (ttl_ms = 0). Returns 1 if this token held a lease that had not expired (renewed or
# released), 2 if the lease's record is gone (the store lost it), or 1 if it is ours but expired
# less than grace_ms after the store lost its records or changed server (a replica that
# lagged behind our renewals): nobody else can hold the id then, so the holder re-asserts
# it with its own horizon. Returns 0, writing nothing, when another holder has the id or
# this lease expired: a lost lease must not raise the id's horizon. A renewal never lowers
# the horizon; a release records horizon_ms as it is (the end of the last tick its holder
# really used, below the horizon it recorded ahead).
RENEW: Final = RedisScript(
    SERVER
    + """
local id, token, ttl, bound = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local since = tonumber(redis.call('HGET', KEYS[1], 'since') or '')
local settling = since and now - since < tonumber(ARGV[7])
local v = redis.call('HGET', KEYS[1], id)
local owner, acquired, layout = ARGV[5], now, ARGV[6]
if v then
  local held, expires
  owner, held, expires, acquired, layout = string.match(v, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|(.*)$')
  if held ~= token then return 0 end
  if tonumber(expires) <= now and not settling then return 0 end
elseif not since then
  redis.call('HSET', KEYS[1], 'since', now)
end
local old = tonumber(redis.call('HGET', KEYS[1], 'until:' .. id) or '-1') or -1
if bound > old or ttl == 0 then redis.call('HSET', KEYS[1], 'until:' .. id, bound) end
if ttl == 0 then
  redis.call('HDEL', KEYS[1], id)
else
  local lease = owner .. '|' .. token .. '|' .. (now + ttl) .. '|' .. acquired .. '|' .. layout
  redis.call('HSET', KEYS[1], id, lease)
end
if v then return 1 end
return 2
""",
    safe_to_retry=True,  # run twice: renewed again, or released (then 2: gone)
    server_id=True,
)


def _grace_ms(ttl_ms: int) -> int:
    """How long a missing record proves nothing: a holder fences itself a margin before
    its lease expires (``lease.LeaseHolder``), so by then it re-asserted or stopped."""
    return ttl_ms + min(ttl_ms // 3, 2000)


class RedisLeaseStore:
    """Leases in a Redis hash per pool. A dead holder's id stays taken until its record
    expires (Redis's clock); Redis can lose the records (a flush, a restart without
    persistence, a failover to a replica that lagged)."""

    name = "redis"
    needs = Needs(redis=True)
    frees_at_once = False
    can_forget = True

    #: Every pool's key starts so, whatever the settings (see the scripts above).
    KEY_PREFIX = "snowid:workers:"
    #: A set of the pools' names, so that listing the leases never scans the keyspace.
    POOLS = "snowid:worker-pools"

    def __init__(self, alias: str) -> None:
        self.alias = alias
        self.redis = RedisCalls(LEASES.errors)

    @classmethod
    def configured(cls) -> RedisLeaseStore:
        return cls(conf.REDIS_ALIAS)

    def describe(self) -> str:
        return self.redis.describe()

    def client(self) -> Any:
        return self.redis.client

    def key(self, pool: str) -> str:
        return f"{{{self.KEY_PREFIX}{pool}}}"

    def _run(self, script: RedisScript, pool: str, args: list[Any]) -> Any:
        """Run ``script`` on ``pool``, and note the pool's name in ``POOLS`` (a FLUSHALL
        forgets it; the next acquisition or heartbeat in the pool writes it again)."""
        answer = self.redis.run(script, [self.key(pool)], args)
        self.redis.command("sadd", self.POOLS, pool, key=self.POOLS)
        return answer

    def acquire(self, request: LeaseRequest) -> Acquired:
        r = request
        args = [r.size, r.ttl_ms, r.token, r.owner, _grace_ms(r.ttl_ms), r.first, r.layout]
        args.append(r.horizon_ms)
        pool = r.pool
        answer = self._run(ACQUIRE, pool, args)
        worker, other = int(answer[0]), int(answer[1])
        if worker == -3:
            raise self._settling(r, other, int(answer[2]))
        if worker == -1:
            raise exhausted(pool, r.size, other)
        if worker == -2:
            raise WorkerIdUnavailable(
                f"The worker-id lease {other} in the Redis key {self.key(pool)!r} is garbage "
                "(expected 'owner|token|expires_ms|acquired_ms|layout'). Delete that field."
            )
        return Acquired(worker, other)

    def _settling(self, request: LeaseRequest, wait_ms: int, until_ms: int) -> StoreSettling:
        """The wait of a newcomer to ``request.pool``: the request's companions start
        theirs now too (a newcomer leasing from them later waits what is left)."""
        pools = [request.pool]
        for pool in request.companions:
            left, until = (int(v) for v in self._run(SETTLE, pool, [_grace_ms(request.ttl_ms)]))
            if left > 0:
                pools.append(pool)
                wait_ms, until_ms = max(wait_ms, left), max(until_ms, until)
        return StoreSettling(wait_ms, until_ms, tuple(pools))

    def renew(
        self, pool: str, worker: int, token: str, ttl_ms: int, horizon_ms: int, *, layout: str = ""
    ) -> bool:
        owner = f"{socket.gethostname()}:{os.getpid()}"
        args = [worker, token, ttl_ms, horizon_ms, owner, layout, _grace_ms(ttl_ms)]
        answer = int(self._run(RENEW, pool, args))
        if answer == 2 and ttl_ms:
            # Redis lost the record (a flush, a restart, a failover): this holder wrote it
            # again, with its own horizon, before anyone else could take the id.
            metrics.count("recoveries", "ids", self.name)
            logger.warning(
                "Lease re-asserted: Redis had lost the record of worker id %s of pool %r "
                "(flushed, restarted or failed over); its holder wrote it again.",
                worker,
                pool,
            )
        return bool(answer)

    def release(self, pool: str, worker: int, token: str, horizon_ms: int) -> None:
        self.renew(pool, worker, token, 0, horizon_ms)

    def after_fork(self) -> None:
        pass  # the client is redisclient's, which a child opens anew

    def leases(self, pool: str | None = None) -> list[LeaseInfo]:
        if pool:
            names = [pool]
        else:
            names = sorted(p.decode() for p in self.redis.command("smembers", self.POOLS))
        found = []
        for name in names:
            key = self.key(name)
            stored = self.redis.command("hgetall", key, key=key)
            fields = {k.decode(): v.decode() for k, v in stored.items()}
            for field, value in fields.items():
                if not field.isdigit():  # "until:<id>", "since"
                    continue
                owner, _token, expires, acquired, layout = value.split("|", 4)
                horizon = int(fields.get(f"until:{field}", -1))
                found.append(
                    LeaseInfo(name, int(field), owner, int(acquired), int(expires), horizon, layout)
                )
        return sorted(found, key=lambda lease: (lease.pool, lease.worker))
