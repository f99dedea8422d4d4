"""The Redis sequence store: the current value in Redis, under a mark in the database
(raised ahead of demand, committed before Redis may hand out values under it)."""

from __future__ import annotations

import enum
import logging
import os
import time
from dataclasses import dataclass, replace
from typing import Any, Final

from django.db import DatabaseError

from ... import metrics
from ...conf import conf
from ...core.sequence_plan import (
    LOW_WATER_S,
    WINDOW_S,
    Rates,
    needs_raise,
    plan_step,
)
from ...exceptions import (
    SequenceError,
    SequenceNotSupported,
    SequenceUnavailable,
)
from ...stores.base import Needs
from ...stores.redis_scripts import RedisCalls, RedisScript
from ..spec import SequenceSpec
from . import SEQUENCES
from .base import Clock, stored_name
from .database import advance, advance_committed, delete_mark, mark_connection, read_mark

__all__ = ["RedisSequenceStore"]

logger = logging.getLogger(__name__)


# Draw ARGV[1] values of the hash KEYS[1] at clock ARGV[2], rate window ARGV[3]; SERVER_ID
# (ARGV[4], added by the runner) the server's identity.
# {1, first, max}: drawn, headroom to spare; {1, first, max, rates...}: drawn; {0, cur, max,
# rates...}: no headroom; {-1}: no state; {-2}: garbage; {-3, cur, max}: foreign, none drawn.
DRAW: Final = RedisScript(
    """
local h = redis.call('HMGET', KEYS[1], 'cur', 'max', 't', 'n', 'l', 'w', 'wn', 'pw', 'rid')
if not h[2] then return {-1} end
local cur, mx = tonumber(h[1]), tonumber(h[2])
if not cur or not mx then return {-2} end
if h[9] ~= SERVER_ID then return {-3, cur, mx} end
local count, now, len = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t, n, l = tonumber(h[3]) or 0, tonumber(h[4]) or 0, tonumber(h[5]) or 0
local w, wn, pw = tonumber(h[6]) or 0, tonumber(h[7]) or 0, tonumber(h[8]) or 0
if cur + count > mx then return {0, cur, mx, t, n, l, w, wn, pw} end
local moved = false
if now > t then
  if now == t + 1 then l = n else l = 0 end
  n, t, moved = 0, now, true
end
local ws = now - now % len
if ws > w then
  if ws == w + len then pw = wn else pw = 0 end
  wn, w, moved = 0, ws, true
end
n, wn = n + count, wn + count
local last = redis.call('HINCRBY', KEYS[1], 'cur', count)
if moved then
  redis.call('HSET', KEYS[1], 't', t, 'n', n, 'l', l, 'w', w, 'wn', wn, 'pw', pw)
else
  redis.call('HSET', KEYS[1], 'n', n, 'wn', wn)
end
if mx - last >= math.max(n, l, (wn + pw) / len) * LOW_WATER_S + 1 then
  return {1, last - count + 1, mx}
end
return {1, last - count + 1, mx, t, n, l, w, wn, pw}
""".replace("LOW_WATER_S", str(LOW_WATER_S)),
    safe_to_retry=True,  # run twice: a second range, above the first (a gap)
    server_id=True,
    reply=lambda r: _draw(r),
)

# Publish a committed mark (KEYS[1] hash, KEYS[2] lock; ARGV: token, old mark, new mark,
# step, SERVER_ID) if the lock is still ours. A lost or foreign state restarts at the old mark,
# never below it. Returns 1: published; 0: the lock is not ours.
PUBLISH: Final = RedisScript(
    """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
local h = redis.call('HMGET', KEYS[1], 'max', 'rid', 'cur')
local mx, before = tonumber(h[1]), tonumber(ARGV[2])
if not mx or h[2] ~= SERVER_ID then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'cur', before, 'max', ARGV[3], 'rid', SERVER_ID)
else
  if before > mx and (tonumber(h[3]) or 0) < before then
    redis.call('HSET', KEYS[1], 'cur', before)
  end
  if tonumber(ARGV[3]) > mx then redis.call('HSET', KEYS[1], 'max', ARGV[3]) end
end
redis.call('HSET', KEYS[1], 'step', ARGV[4])
redis.call('DEL', KEYS[2])
return 1
""",
    safe_to_retry=True,  # run twice: 0, the lock gone; the mark stays published
    server_id=True,
    reply=bool,
)

# Take the raise lock KEYS[2] of hash KEYS[1] (ARGV: token, expiry ms, SERVER_ID) unless a client
# of this server holds it. Returns {1, lock value, published max}; {0}: held.
ACQUIRE: Final = RedisScript(
    """
local held = redis.call('GET', KEYS[2])
local mine = SERVER_ID .. '/'
if held and string.sub(held, 1, #mine) == mine then return {0} end
mine = mine .. ARGV[1]
redis.call('SET', KEYS[2], mine, 'PX', ARGV[2])
return {1, mine, redis.call('HGET', KEYS[1], 'max')}
""",
    safe_to_retry=True,  # run twice: {0}, held (by us, until it expires)
    server_id=True,
    reply=lambda r: _lock(r),
)

# Release the lock KEYS[1] if it still holds the token ARGV[1].
RELEASE: Final = RedisScript(
    """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
""",
    safe_to_retry=True,  # run twice: 0, the lock gone
)

FIELDS: Final = ("t", "n", "l", "w", "wn", "pw")


class Outcome(enum.Enum):
    DRAWN = 1
    SHORT = 0  # not enough headroom, nothing drawn
    LOST = -1  # no state: a new sequence, or one Redis lost
    GARBAGE = -2
    FOREIGN = -3  # another server published the state: unverified, nothing drawn


_OUTCOMES: Final = {outcome.value: outcome for outcome in Outcome}


@dataclass(frozen=True)
class Draw:
    """DRAW's reply: ``first`` (or the current value), ``mark``, ``rates`` (None: to spare)."""

    outcome: Outcome
    first: int = 0
    mark: int = 0
    rates: Rates | None = None


def _draw(reply: list[Any]) -> Draw:
    outcome = _OUTCOMES[reply[0]]
    if len(reply) < 4:
        return Draw(outcome, *reply[1:])
    return Draw(outcome, reply[1], reply[2], Rates(*reply[3:]))


@dataclass(frozen=True)
class Lock:
    """ACQUIRE's reply: the lock's ``token`` (None: another client holds it), and the
    ``published`` mark (None if none)."""

    token: str | None
    published: int | None = None


def _lock(reply: list[Any]) -> Lock:
    if not reply[0]:
        return Lock(None)
    token = reply[1].decode() if isinstance(reply[1], bytes) else str(reply[1])
    return Lock(token, None if reply[2] is None else int(reply[2]))


class RedisSequenceStore:
    """The current value in Redis, the mark in the database, raised ahead of demand."""

    name = "redis"
    needs = Needs(redis=True, tables=("snowid_sequences.SequenceMark",))
    raises_ahead = True
    LOCK_TTL_MS: Final = 10_000
    POLL_S: Final = 0.002

    def __init__(self, alias: str, prefix: str, clock: Clock = time.time) -> None:
        self.alias = alias  # named in error messages; the client comes from stores.redis_client
        self.prefix = prefix
        self.clock = clock
        self.redis = RedisCalls(SEQUENCES.errors)
        self._keys: dict[str, str] = {}

    @classmethod
    def configured(cls) -> RedisSequenceStore:
        return cls(conf.REDIS_ALIAS, conf.REDIS_KEY_PREFIX)

    def describe(self) -> str:
        return self.redis.describe()

    def after_fork(self) -> None:
        pass

    def client(self) -> Any:
        return self.redis.client

    def key(self, stored: str) -> str:
        # The whole key is the hash tag: a sequence and its lock share one cluster slot.
        key = f"{{{self.prefix}:seq:{stored}}}"
        if len(self._keys) < 1024:  # daily names come and go
            self._keys[stored] = key
        return key

    def _refuse(self, spec: SequenceSpec, nowait: bool) -> None:
        if nowait:
            raise SequenceNotSupported(
                f"nowait=True on the sequence {spec.name!r}: SNOWID_SEQUENCE_BACKEND is "
                "'redis', where no transaction holds a sequence (a draw never waits for "
                "one) and a rolled-back value is a gap, never issued again. Drop nowait, "
                "or use the 'database' backend for transactional sequences. Nothing was "
                "issued."
            )
        if spec.reset is not None:
            raise SequenceNotSupported(
                f"reset_value on the sequence {spec.name!r}: SNOWID_SEQUENCE_BACKEND is "
                "'redis', whose values never go back below the database mark (every value "
                "under it counts as issued after a Redis loss), so they cannot cycle. Use "
                "the 'database' backend for cycling sequences. Nothing was issued."
            )

    def next_values(
        self,
        spec: SequenceSpec,
        count: int,
        using: str | None,
        now: float | None = None,
        *,
        nowait: bool = False,
    ) -> range:
        """Draw ``count`` values (of the day of ``now`` for a daily sequence)."""
        if nowait or not spec.plain:
            return self._stepped(spec, count, using, now, nowait)
        if now is None:
            now = self.clock()
        stored = stored_name(spec, now) if spec.daily else spec.name
        key = self._keys.get(stored) or self.key(stored)
        args = [count, int(now), WINDOW_S]
        deadline = None
        while True:
            draw: Draw = self.redis.run(DRAW, [key], args)
            if draw.outcome is Outcome.DRAWN:
                self._raise_ahead(spec, stored, using, draw, count, now)
                return range(draw.first, draw.first + count)
            if draw.outcome is Outcome.GARBAGE:
                raise SequenceError(
                    f"The Redis key {key!r} does not hold a sequence (fields cur and max as "
                    "integers). Delete it: the sequence continues above its database mark."
                )
            # The raise that wins the lock re-syncs the state; the others draw again.
            lost = draw.outcome is Outcome.LOST
            floor = spec.start - 1 if lost else draw.mark
            resync = draw.outcome if draw.outcome is not Outcome.SHORT else None
            rates = draw.rates or Rates()
            if self.raise_mark(
                spec, stored, using, rates=rates, floor=floor, need=count, resync=resync
            ):
                continue
            deadline = self._wait_for_the_lock(stored, deadline)

    def _stepped(
        self, spec: SequenceSpec, count: int, using: str | None, now: float | None, nowait: bool
    ) -> range:
        """Every ``spec.step``-th value of a plain draw (or what Redis cannot do, refused)."""
        self._refuse(spec, nowait)
        plain = replace(spec, step=1, start=spec.start - spec.step + 1, lift=True)
        block = self.next_values(plain, count * spec.step, using, now)
        return block[spec.step - 1 :: spec.step]

    def _raise_ahead(
        self, spec: SequenceSpec, stored: str, using: str | None, draw: Draw, count: int, now: float
    ) -> None:
        """Raise the mark after ``draw`` if its headroom runs low at the rates it read."""
        rates = draw.rates
        if rates is None:
            return
        headroom = draw.mark - draw.first - count + 1
        if needs_raise(headroom, rates.estimate(int(now))):
            try:
                self.raise_mark(spec, stored, using, rates=rates, floor=draw.mark)
            except SequenceError as exc:
                logger.warning("Could not raise the mark of %s ahead: %s", stored, exc)

    def _wait_for_the_lock(self, stored: str, deadline: float | None) -> float:
        """Wait a poll for another client's raise lock, until a deadline (then returned)."""
        if deadline is None:
            deadline = time.monotonic() + 2 * self.LOCK_TTL_MS / 1000
        elif time.monotonic() > deadline:
            raise SequenceUnavailable(
                f"The sequence {stored!r} has no headroom left and its mark could not be "
                "raised in time (another client holds the raise lock). Nothing was issued."
            )
        time.sleep(self.POLL_S)
        return deadline

    def raise_mark(
        self,
        spec: SequenceSpec,
        stored: str,
        using: str | None,
        *,
        rates: Rates,
        floor: int,
        need: int = 0,
        by: int | None = None,
        resync: Outcome | None = None,
    ) -> bool:
        """Raise, commit and publish the mark above ``floor`` if this caller wins the lock;
        False when another client holds it."""
        key = self.key(stored)
        lock = f"{key}:raise"
        taken: Lock = self.redis.run(
            ACQUIRE, [key, lock], [f"{os.getpid()}-{os.urandom(6).hex()}", self.LOCK_TTL_MS]
        )
        token, published = taken.token, taken.published
        if token is None:
            return False
        # The previous holder may have raised it between our draw and our lock.
        if by is None and published is not None and published > floor:
            self.redis.run(RELEASE, [lock], [token])
            return True
        step = by or self._step(spec, rates, need)
        try:
            new = resync is Outcome.LOST and not self._has_mark(stored, using)
            if resync and not new:
                self._report_loss(stored, resync)
            mark = advance_committed(using, stored, floor=max(floor, spec.start - 1), by=step)
        except BaseException:
            self.redis.run(RELEASE, [lock], [token])
            raise
        done: bool = self.redis.run(PUBLISH, [key, lock], [token, mark - step, mark, step])
        self._published(stored, done, new, resync, mark - step + 1)
        return done

    def _step(self, spec: SequenceSpec, rates: Rates, need: int) -> int:
        """How far to raise the mark at the rates read, at least ``need``."""
        estimate = rates.estimate(int(self.clock()))
        return plan_step(estimate, min_step=spec.min_step, max_step=spec.max_step, need=need)

    def _published(
        self, stored: str, done: bool, new: bool, resync: Outcome | None, first: int
    ) -> None:
        """Say that a new sequence started, or that a lost or foreign one resumed."""
        if done and new:
            logger.info(
                "Sequence started: %r begins at %d in Redis, under its new database mark.",
                stored,
                first,
            )
        elif done and resync:
            kind = "recoveries" if resync is Outcome.LOST else "failover_resyncs"
            metrics.count(kind, "sequences", self.name)
            logger.info("Recovery done: sequence %r resumes at %d, above its mark.", stored, first)

    @staticmethod
    def _has_mark(stored: str, using: str | None) -> bool:
        """Whether the stored sequence has a database mark."""
        try:
            return read_mark(mark_connection(using), stored) is not None
        except DatabaseError:
            return True

    @staticmethod
    def _report_loss(stored: str, status: Outcome) -> None:
        logger.warning(
            "Store loss detected: Redis holds %s; re-syncing it above its mark.",
            f"no state of sequence {stored!r}, which has a database mark (lost in a restart, "
            "a flush or a failover)"
            if status is Outcome.LOST
            else f"a state of sequence {stored!r} that another server published (a "
            "failover, a restart, a migrated slot)",
        )

    def last_value(
        self, spec: SequenceSpec, using: str | None, now: float | None = None
    ) -> int | None:
        """The last value drawn: Redis's, else the mark; ``None`` if neither."""
        stored = stored_name(spec, self.clock() if now is None else now)
        cur = self.redis.command("hget", self.key(stored), "cur", key=self.key(stored))
        if cur is not None:
            return int(cur)
        return read_mark(mark_connection(using), stored)

    def delete(self, spec: SequenceSpec, using: str | None, now: float | None = None) -> bool:
        """Delete the sequence's mark, then its Redis state; True if it existed."""
        stored = stored_name(spec, self.clock() if now is None else now)
        existed = delete_mark(mark_connection(using), stored)
        key = self.key(stored)
        return bool(self.redis.command("delete", key, f"{key}:raise", key=key)) or existed

    def continue_above(self, spec: SequenceSpec, stored: str, value: int, using: str | None) -> int:
        """Make the sequence continue above ``value``; returns the last value now."""
        mark = advance(mark_connection(using), stored, floor=value, by=0)
        for _ in range(2000):
            state = self.state(stored)
            if "max" not in state or state["cur"] >= value:
                return max(state.get("cur", mark), value)
            published = state["max"]
            floor = max(value, published + 1)  # above max: the publish lifts cur
            if self.raise_mark(spec, stored, using, rates=Rates(), floor=floor, by=spec.min_step):
                continue
            time.sleep(0.005)  # another client holds the raise lock: let it finish
        raise SequenceError(f"The raise lock of {stored!r} stayed taken for 10 seconds.")

    @staticmethod
    def rates(state: dict[str, int]) -> Rates:
        """The consumption figures of a :meth:`state`."""
        return Rates(*(state.get(f, 0) for f in FIELDS))

    def state(self, stored: str) -> dict[str, int]:
        """The Redis fields of one stored sequence (empty if Redis holds none)."""
        key = self.key(stored)
        raw = self.redis.command("hgetall", key, key=key)
        return {k.decode(): int(v) for k, v in raw.items() if k != b"rid"}
