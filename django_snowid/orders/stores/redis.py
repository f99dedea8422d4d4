"""The Redis order store: each stream's state in a hash, changed by one Lua script each; a
state another server wrote (its ``run_id``) is re-synced from the database before use.
Imported only when this store is configured."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ...conf import conf
from ...core.order_blocks import BLOCK_SHARE, Block
from ...core.order_keys import KeyConflict, KeyRecord, OutsideWindow
from ...core.order_stream import ClockBehind, Outcome, Reserved, Resuming, SecondFull
from ...exceptions import OrderNumberError
from ...stores.base import Needs
from ...stores.redis_scripts import RedisCalls, RedisScript
from . import ORDERS
from .base import MISSING, Missing, Position, RecoverArgs, ReserveArgs

__all__ = [
    "RECOVER",
    "RESERVE",
    "RESERVE_BLOCK",
    "RedisOrderStore",
    "block_outcome",
    "reserve_outcome",
]


# RESERVE and RESERVE_BLOCK: KEYS[1], a stream's hash: sec, seq (its last position), hold
# (held until that second after a recovery), rid (the server that wrote it), and its key
# record (core.order_keys.KeyRecord): kid, knext, kfrom. ARGV: 1 UTC offset, 2 cap,
# 3 count, 4 first sequence of a new second, 5 max lead, 6 clock s ('': TIME), 7 clock us,
# 8 key id ('': a format that conceals nothing), 9 window start, 10 window end, 11 next
# key id; the server's identity (added by the runner: SERVER_ID, see redis_scripts).
# _RESERVE_STEPS: core.order_stream.held(), then reserve() up to the grant, shared by both.
_RESERVE_STEPS: Final = """
local state = redis.call('HMGET', KEYS[1], 'sec', 'seq', 'hold', 'rid', 'kid', 'knext', 'kfrom')
if not state[1] then return {4} end
local second, sequence = tonumber(state[1]), tonumber(state[2])
if not second or not sequence then return {5} end
if state[4] ~= SERVER_ID then return {7} end
local last = second
local t = ARGV[6] ~= '' and {ARGV[6], ARGV[7]} or redis.call('TIME')
local now = tonumber(t[1]) + tonumber(ARGV[1])
local now_ms = math.floor(tonumber(t[2]) / 1000)
if state[3] then
  local hold = tonumber(state[3])
  if hold and now < hold and hold <= now + 1 then return {6, 1000 - now_ms} end
  redis.call('HDEL', KEYS[1], 'hold')
end
local cap, count = tonumber(ARGV[2]), tonumber(ARGV[3])
local first, lead = tonumber(ARGV[4]), tonumber(ARGV[5])
if now > second then
  second, sequence = now, first - 1
elseif second - now > lead then
  return {3, second - now}
end
if sequence >= cap then
  if now < second and second < now + lead then
    second, sequence = second + 1, first - 1
  else
    return {2, (second - now) * 1000 + (1000 - now_ms)}
  end
end
"""

# core.order_keys.agree() for the second about to be issued in: {8, second} outside the
# window; {9, second, recorded key id, last second}: another key conceals it. Sets
# "record" to the fields to write when the record changes.
_KEY_STEPS: Final = """
local record = nil
if ARGV[8] ~= '' then
  local was = {state[5] or '', state[6] or '', tonumber(state[7]) or 0}
  local kid, knext, kfrom = was[1], was[2], was[3]
  local wstart, wend = tonumber(ARGV[9]), tonumber(ARGV[10])
  if second < wstart or second >= wend then return {8, second} end
  if knext ~= '' and second >= kfrom then kid, knext, kfrom = knext, '', 0 end
  if ARGV[8] ~= kid then
    if kid ~= '' and last >= wstart then return {9, second, kid, last} end
    kid = ARGV[8]
  end
  if ARGV[11] ~= '' then knext, kfrom = ARGV[11], wend end
  if kid ~= was[1] or knext ~= was[2] or kfrom ~= was[3] then
    record = {'kid', kid, 'knext', knext, 'kfrom', kfrom}
  end
end
"""

_WRITE: Final = """
if record then
  redis.call('HSET', KEYS[1], 'sec', second, 'seq', sequence + granted, unpack(record))
else
  redis.call('HSET', KEYS[1], 'sec', second, 'seq', sequence + granted)
end
"""

# core.order_stream.reserve(). Returns {1, second, first, count}; {2, wait_ms}: full;
# {3, behind}; {4}: no state; {5}: garbage; {6, wait_ms}: held after a recovery; {7}:
# another server wrote the state; {8, ...}, {9, ...}: see _KEY_STEPS (nothing reserved).
RESERVE: Final = RedisScript(
    _RESERVE_STEPS
    + """
local granted = math.min(count, cap - sequence)
"""
    + _KEY_STEPS
    + _WRITE
    + """
return {1, second, sequence + 1, granted}
""",
    safe_to_retry=True,  # run twice: a second range, after the first (a gap)
    server_id=True,
)

# core.order_stream.reserve_block(), RESERVE's keys and arguments (ARGV[3]: the wished
# size). Returns {1, second, first, count, ms_left}; anything else as RESERVE.
RESERVE_BLOCK: Final = RedisScript(
    _RESERVE_STEPS
    + """
local granted = 1
if second == now then
  granted = math.max(1, math.min(count, math.floor((cap - sequence) / SHARE)))
end
""".replace("SHARE", str(BLOCK_SHARE))
    + _KEY_STEPS
    + _WRITE
    + """
return {1, second, sequence + 1, granted, (second - now) * 1000 + (1000 - now_ms)}
""",
    safe_to_retry=True,  # run twice: a second block, after the first (a gap)
    server_id=True,
)

# core.order_stream.resume() on hash KEYS[1], on Redis's clock; a resumed stream is held
# ("hold") until the clock reaches its second. A state another server wrote loses its key
# record too (the first reservation after records its key). ARGV: database has a number
# (0/1), its second, sequence, UTC offset, first sequence, force, dry run, [clock], SERVER_ID.
# Returns {had_state, before_second, before_sequence, after_second, after_sequence}; {-1}.
RECOVER: Final = RedisScript(
    """
local state = redis.call('HMGET', KEYS[1], 'sec', 'seq', 'rid')
local bs, bq = tonumber(state[1]), tonumber(state[2])
local had = bs ~= nil and bq ~= nil
if state[1] and not had then return {-1} end
local rid = SERVER_ID
local unverified = had and state[3] ~= rid
local has_db, ds, dq = ARGV[1] == '1', tonumber(ARGV[2]), tonumber(ARGV[3])
if had and not unverified and ARGV[6] ~= '1'
    and (not has_db or bs > ds or (bs == ds and bq >= dq)) then
  return {1, bs, bq, bs, bq}
end
local now = tonumber(#ARGV > 8 and ARGV[8] or redis.call('TIME')[1]) + tonumber(ARGV[4])
local ts, tq = now + 1, tonumber(ARGV[5]) - 1
if had and not unverified and ARGV[6] ~= '1' then
  if ds > ts or (ds == ts and dq > tq) then ts, tq = ds, dq end
else
  if has_db and ds >= now then ts = ds + 1 end
  if unverified and bs >= ts then ts = bs + 1 end
end
if had and (bs > ts or (bs == ts and bq >= tq)) then
  return {1, bs, bq, bs, bq}
end
local dry = ARGV[7] == '1'
if not dry and unverified then redis.call('HDEL', KEYS[1], 'kid', 'knext', 'kfrom') end
if not dry and ts == now + 1 then
  redis.call('HSET', KEYS[1], 'sec', ts, 'seq', tq, 'hold', ts, 'rid', rid)
elseif not dry then
  redis.call('HSET', KEYS[1], 'sec', ts, 'seq', tq, 'rid', rid)
  redis.call('HDEL', KEYS[1], 'hold')
end
if had then return {1, bs, bq, ts, tq} end
return {0, 0, 0, ts, tq}
""",
    safe_to_retry=True,  # run twice: the state it reached is kept (never lowered)
    server_id=True,
)


def reserve_outcome(reply: list[int]) -> Outcome | Missing | None:
    """What a reply of :data:`RESERVE` means; ``None``: the state is garbage."""
    status = reply[0]
    if status == 1:
        return Reserved(reply[1], reply[2], reply[3])
    if status == 2:
        return SecondFull(reply[1])
    if status == 3:
        return ClockBehind(reply[1])
    if status in (4, 7):
        # No state, or one another server wrote: the issuer recovers the stream first.
        return MISSING
    if status == 6:
        return Resuming(reply[1])
    if status == 8:
        return OutsideWindow(reply[1])
    if status == 9:
        return KeyConflict(reply[1], _text(reply[2]), reply[3])
    return None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def block_outcome(reply: list[int]) -> Block | Outcome | Missing | None:
    """What a reply of :data:`RESERVE_BLOCK` means; ``None``: the state is garbage."""
    if reply[0] == 1:
        return Block(reply[1], reply[2], reply[3], reply[4])
    return reserve_outcome(reply)


_NO_CLOCK: Final = ("", "")
_PLAIN: Final = ("", "", "", "")


def _garbage(key: str) -> OrderNumberError:
    return OrderNumberError(
        f"The Redis key {key!r} does not hold an order-number state "
        "(fields sec and seq as integers). Delete it and run manage.py snowid_recover."
    )


class RedisOrderStore:
    """The state of every stream in Redis, through a django-redis cache alias."""

    name = "redis"
    needs = Needs(redis=True)

    @classmethod
    def configured(cls) -> RedisOrderStore:
        return cls(conf.REDIS_ALIAS, conf.REDIS_KEY_PREFIX)

    def __init__(self, alias: str, prefix: str, clock: Callable[[], float] | None = None) -> None:
        self.alias = alias
        self.prefix = prefix
        # None: the scripts read the Redis server's clock (TIME); tests set the time.
        self.clock = clock
        self.redis = RedisCalls(ORDERS.errors)
        self._keys: dict[str, str] = {}

    def client(self) -> Any:
        return self.redis.client

    def describe(self) -> str:
        return self.redis.describe()

    def after_fork(self) -> None:
        pass

    def key(self, stream: str) -> str:
        key = self._keys.get(stream)
        if key is None:
            key = self._keys[stream] = f"{{{self.prefix}:order:{stream}}}"
        return key

    def _run(self, script: RedisScript, key: str, args: tuple[Any, ...]) -> Any:
        return self.redis.run(script, (key,), args)

    def _argv(self, args: ReserveArgs) -> tuple[Any, ...]:
        """RESERVE's and RESERVE_BLOCK's arguments (see their comment)."""
        clock: tuple[Any, ...] = _NO_CLOCK
        if self.clock is not None:  # Unix seconds and microseconds, as TIME answers
            now = self.clock()
            clock = (int(now), int(now % 1 * 1_000_000))
        window = _PLAIN if args.keys is None else args.keys.as_args()
        return (
            args.offset,
            args.cap,
            args.wanted,
            args.first_sequence,
            args.max_lead,
            *clock,
            *window,
        )

    def reserve(self, stream: str, args: ReserveArgs) -> Outcome | Missing:
        key = self.key(stream)
        outcome = reserve_outcome(self._run(RESERVE, key, self._argv(args)))
        if outcome is not None:
            return outcome
        raise _garbage(key)

    def holds_blocks(self) -> bool:
        return True

    def reserve_block(self, stream: str, args: ReserveArgs) -> Block | Outcome | Missing:
        key = self.key(stream)
        outcome = block_outcome(self._run(RESERVE_BLOCK, key, self._argv(args)))
        if outcome is not None:
            return outcome
        raise _garbage(key)

    def recover(
        self, stream: str, database: Position | None, args: RecoverArgs
    ) -> tuple[Position | None, Position]:
        second, sequence = database or (0, 0)
        argv = (
            int(database is not None),
            second,
            sequence,
            args.offset,
            args.first_sequence,
            int(args.force),
            int(args.dry_run),
            *(() if self.clock is None else (int(self.clock()),)),
        )
        reply = self._run(RECOVER, self.key(stream), argv)
        if int(reply[0]) == -1:
            raise _garbage(self.key(stream))
        return self._before_after(reply)

    @staticmethod
    def _before_after(reply: Any) -> tuple[Position | None, Position]:
        had, bs, bq, as_, aq = (int(v) for v in reply)
        return ((bs, bq) if had else None), (as_, aq)

    def read(self, stream: str) -> Position | None:
        key = self.key(stream)
        second, sequence = self.redis.command("hmget", key, ["sec", "seq"], key=key)
        if second is None or sequence is None:
            return None
        return int(second), int(sequence)

    def keys(self, stream: str) -> KeyRecord | None:
        key = self.key(stream)
        kid, knext, kfrom = self.redis.command("hmget", key, ["kid", "knext", "kfrom"], key=key)
        if not kid:
            return None
        return KeyRecord(kid.decode(), (knext or b"").decode(), int(kfrom or 0))

    def streams(self) -> list[str]:
        start = f"{{{self.prefix}:order:"
        keys = self.redis.command("scan_iter", match=f"{start}*")
        return [k.decode()[len(start) : -1] for k in keys]
