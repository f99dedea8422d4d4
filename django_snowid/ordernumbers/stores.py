"""Where a stream's state lives: Redis (one Lua script per operation) or the database.

Both stores run :func:`django_snowid.core.sequence.reserve` atomically and answer with its
outcomes, or :data:`MISSING` when they hold no state for the stream (a new stream, or a
Redis that restarted or was flushed): the caller must then recover the state from the
database before anything is issued.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from typing import Any, Final, NamedTuple, Protocol

import redis
from django.db import OperationalError, router, transaction
from django.db.models import Q

from ..core.sequence import ClockBehind, Outcome, Reserved, SecondFull, reserve
from ..exceptions import OrderNumberError, OrderNumberUnavailable
from .redischannel import Channel, Request

__all__ = ["MISSING", "DatabaseOrderStore", "OrderStore", "RedisOrderStore", "ReserveArgs"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: The store holds no state for the stream.
MISSING: Final = _Missing()

Position = tuple[int, int]


class ReserveArgs(NamedTuple):
    """What a reservation needs besides the stream (see ``core.sequence.reserve``)."""

    offset: int  # the zone's UTC offset in seconds: local second = Unix second + offset
    cap: int  # the largest sequence of a second
    wanted: int  # how many numbers (not "count": that would hide tuple.count)
    first_sequence: int  # of a new second
    max_lead: int  # how many seconds the state may be ahead of the clock


class OrderStore(Protocol):
    name: str

    def reserve(self, stream: str, args: ReserveArgs) -> Outcome | _Missing: ...

    def raise_to(self, stream: str, position: Position) -> tuple[Position | None, Position]:
        """Raise the state to at least ``position``, atomically; never lower it.

        Returns (state before, state after).
        """
        ...

    def read(self, stream: str) -> Position | None: ...


# ---------------------------------------------------------------------- Redis
# Reserve numbers of one stream; the same steps as core.sequence.reserve().
# KEYS[1]: the stream's state, a hash {sec, seq}: local second and sequence of its last number
# ARGV[1]: the zone's UTC offset in seconds (local second = Unix second from TIME + offset)
# ARGV[2]: the cap (largest sequence of a second)   ARGV[3]: how many numbers
# ARGV[4]: first sequence of a new second            ARGV[5]: max seconds ahead of the clock
# Returns {1, second, first_sequence, count}: reserved; {2, wait_ms}: the second is full;
# {3, seconds_behind}: the clock is too far behind; {4}: no state; {5}: the state is garbage.
RESERVE_LUA: Final = """
local state = redis.call('HMGET', KEYS[1], 'sec', 'seq')
if not state[1] then return {4} end
local second, sequence = tonumber(state[1]), tonumber(state[2])
if not second or not sequence then return {5} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(ARGV[1])
local now_ms = math.floor(tonumber(t[2]) / 1000)
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
local granted = math.min(count, cap - sequence)
redis.call('HSET', KEYS[1], 'sec', second, 'seq', sequence + granted)
return {1, second, sequence + 1, granted}
"""

# Raise a stream's state to at least a position; never lower it.
# KEYS[1]: the stream's state hash   ARGV[1], ARGV[2]: local second and sequence
# Returns {had_state (0/1), before_second, before_sequence, after_second, after_sequence}.
RAISE_LUA: Final = """
local state = redis.call('HMGET', KEYS[1], 'sec', 'seq')
local second, sequence = tonumber(ARGV[1]), tonumber(ARGV[2])
local bs, bq = tonumber(state[1]), tonumber(state[2])
if bs and bq and (bs > second or (bs == second and bq >= sequence)) then
  return {1, bs, bq, bs, bq}
end
redis.call('HSET', KEYS[1], 'sec', second, 'seq', sequence)
if bs and bq then return {1, bs, bq, second, sequence} end
return {0, 0, 0, second, sequence}
"""


RESERVE_SHA: Final = hashlib.sha1(RESERVE_LUA.encode()).hexdigest()
RAISE_SHA: Final = hashlib.sha1(RAISE_LUA.encode()).hexdigest()
_SCRIPTS: Final = {RESERVE_SHA: RESERVE_LUA, RAISE_SHA: RAISE_LUA}


class SentReservation(NamedTuple):
    """A reservation sent to Redis whose reply has not been read yet."""

    key: str
    args: ReserveArgs
    request: Request


class RedisOrderStore:
    """The state of every stream in Redis, through a django-redis cache alias.

    Each thread keeps one connection of its own (a :class:`Channel`), made with the
    alias's connection settings: a number costs one EVALSHA round trip and no pool
    checkout, and ``save()`` sends it ahead (:meth:`send_reserve`). Scripts are called by
    SHA and loaded on the first NOSCRIPT (a new server, or one that restarted).
    """

    name = "redis"

    def __init__(self, alias: str, prefix: str) -> None:
        self.alias = alias
        self.prefix = prefix
        self._client: Any = None
        self._local = threading.local()
        self._keys: dict[str, str] = {}
        self._packed: dict[tuple[str, str, tuple[int, ...]], Any] = {}

    def key(self, stream: str) -> str:
        key = self._keys.get(stream)
        if key is None:
            # The whole key is its hash tag: Redis Cluster keeps a stream on one slot.
            key = self._keys[stream] = f"{{{self.prefix}:order:{stream}}}"
        return key

    def _connect(self) -> Any:
        from django_redis import get_redis_connection

        try:
            self._client = get_redis_connection(self.alias)
        except NotImplementedError:
            raise OrderNumberError(
                f"The cache alias {self.alias!r} (SNOWID_REDIS_ALIAS) is not a django-redis cache."
            ) from None
        return self._client

    def _channel(self) -> Channel:
        local = self._local
        channel: Channel | None = getattr(local, "channel", None)
        if channel is None or channel.pid != os.getpid():
            # New thread, or a forked child: never reuse a socket the parent owns.
            pool = (self._client or self._connect()).connection_pool
            channel = local.channel = Channel(pool.connection_class(**pool.connection_kwargs))
        return channel

    def _send(self, sha: str, key: str, args: tuple[int, ...]) -> Request:
        channel = self._channel()
        # A stream's reservations repeat the same few commands: pack each once.
        packed = self._packed.get((sha, key, args))
        if packed is None:
            packed = channel.pack("EVALSHA", sha, 1, key, *args)
            if len(self._packed) >= 1024:  # random start offsets vary the arguments
                self._packed.clear()
            self._packed[sha, key, args] = packed
        return channel.send(packed)

    def _result(self, sha: str, key: str, args: tuple[int, ...], request: Request | None) -> Any:
        """The reply of EVALSHA ``sha`` sent as ``request`` (sent now if ``None``).

        On NOSCRIPT (a new server, or one that restarted) the script is loaded and sent
        again; on a broken connection it is sent once more (the connection may be stale
        after a Redis restart). Sending a reservation again that did run costs a gap,
        never a duplicate.
        """
        load = False
        failures = 0
        while True:
            try:
                if load:
                    channel = self._channel()
                    channel.send(channel.pack("SCRIPT", "LOAD", _SCRIPTS[sha])).result()
                if request is None or request.channel.pid != os.getpid():
                    request = self._send(sha, key, args)
                return request.result()
            except redis.exceptions.NoScriptError:
                if load:  # loaded and gone again at once: do not loop
                    raise OrderNumberError(f"Redis keeps forgetting the script {sha}.") from None
                load, request = True, None
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
                failures += 1
                if failures == 2:
                    raise OrderNumberUnavailable(
                        f"Redis (cache alias {self.alias!r}) is unreachable: "
                        f"{str(exc).rstrip('.')}. No order number was issued."
                    ) from exc
                request = None
            except redis.exceptions.ResponseError as exc:
                raise OrderNumberError(
                    f"Redis refused the order-number key {key!r}: {exc}"
                ) from exc

    def send_reserve(self, stream: str, args: ReserveArgs) -> SentReservation:
        """Send a reservation now; :meth:`reserve_result` reads what it reserved.

        Nothing is raised here: a failure to send surfaces (after one more try) when the
        result is read.
        """
        key = self.key(stream)
        return SentReservation(key, args, self._send(RESERVE_SHA, key, args))

    def reserve_result(self, sent: SentReservation) -> Outcome | _Missing:
        reply = self._result(RESERVE_SHA, sent.key, sent.args, sent.request)
        status = reply[0]
        if status == 1:
            return Reserved(reply[1], reply[2], reply[3])
        if status == 2:
            return SecondFull(reply[1])
        if status == 3:
            return ClockBehind(reply[1])
        if status == 4:
            return MISSING
        raise OrderNumberError(
            f"The Redis key {sent.key!r} does not hold an order-number state "
            "(fields sec and seq as integers). Delete it and run manage.py snowid_recover."
        )

    def reserve(self, stream: str, args: ReserveArgs) -> Outcome | _Missing:
        return self.reserve_result(self.send_reserve(stream, args))

    def raise_to(self, stream: str, position: Position) -> tuple[Position | None, Position]:
        reply = self._result(RAISE_SHA, self.key(stream), tuple(position), None)
        had, bs, bq, as_, aq = (int(v) for v in reply)
        return ((bs, bq) if had else None), (as_, aq)

    def read(self, stream: str) -> Position | None:
        client = self._client or self._connect()
        try:
            second, sequence = client.hmget(self.key(stream), ["sec", "seq"])
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            raise OrderNumberUnavailable(
                f"Redis (cache alias {self.alias!r}) is unreachable: {str(exc).rstrip('.')}."
            ) from exc
        if second is None or sequence is None:
            return None
        return int(second), int(sequence)


# ------------------------------------------------------------------- database
class DatabaseOrderStore:
    """The state of every stream in a table of this app, one row per stream.

    A reservation reads the row and writes it back with a compare-and-set
    (``UPDATE ... WHERE second = <read> AND sequence = <read>``): two statements, no
    explicit transaction; a writer that loses the race twice takes the row lock. Inside
    a transaction the written row stays locked until it ends (with ATOMIC_REQUESTS,
    requests that issue numbers of one stream run one after the other).
    """

    name = "database"

    def __init__(self, using: str | None = None) -> None:
        self.using = using

    def _db(self) -> str:
        from ..models import OrderStreamState

        return self.using or router.db_for_write(OrderStreamState)

    def reserve(self, stream: str, args: ReserveArgs) -> Outcome | _Missing:
        db = self._db()
        try:
            return self._reserve(db, stream, *args)
        except OperationalError as exc:  # connection lost or refused, not a constraint
            raise OrderNumberUnavailable(
                f"The database {db!r} is unreachable for order numbers: {str(exc).rstrip('.')}. "
                "No order number was issued."
            ) from exc

    def _reserve(
        self,
        db: str,
        stream: str,
        offset: int,
        cap: int,
        count: int,
        first_sequence: int,
        max_lead: int,
    ) -> Outcome | _Missing:
        from ..models import OrderStreamState

        connection = transaction.get_connection(db)
        qn = connection.ops.quote_name
        table = qn(OrderStreamState._meta.db_table)
        # Two fixed statements on the hot path: plain SQL, no query building.
        select = f"SELECT {qn('second')}, {qn('sequence')} FROM {table} WHERE {qn('name')} = %s"
        compare_and_set = (
            f"UPDATE {table} SET {qn('second')} = %s, {qn('sequence')} = %s "
            f"WHERE {qn('name')} = %s AND {qn('second')} = %s AND {qn('sequence')} = %s"
        )
        lock = f"UPDATE {table} SET {qn('sequence')} = {qn('sequence')} WHERE {qn('name')} = %s"
        # SQLite: a deferred transaction that reads before it writes deadlocks with another
        # writer, so inside one the row is always taken with the lock first.
        optimistic = 0 if connection.vendor == "sqlite" and connection.in_atomic_block else 2

        def attempt(cursor: Any, *, locked: bool) -> Outcome | _Missing | None:
            if locked:
                cursor.execute(lock, [stream])
                if cursor.rowcount == 0:
                    return MISSING
            cursor.execute(select, [stream])
            row = cursor.fetchone()
            if row is None:
                return MISSING
            last = (int(row[0]), int(row[1]))
            now_float = time.time()
            state, outcome = reserve(
                last,
                int(now_float) + offset,
                int(now_float % 1 * 1000),
                cap=cap,
                count=count,
                first_sequence=first_sequence,
                max_lead=max_lead,
            )
            if state == last:  # a full second or a clock too far behind: nothing to write
                return outcome
            cursor.execute(compare_and_set, [*state, stream, *last])
            return outcome if cursor.rowcount == 1 else None

        with connection.cursor() as cursor:
            # Optimistic first: two statements, no transaction. A writer that lost the race
            # takes the row lock instead, so nobody starves under contention.
            for _ in range(optimistic):
                outcome = attempt(cursor, locked=False)
                if outcome is not None:
                    return outcome
        with transaction.atomic(using=db), connection.cursor() as cursor:
            outcome = attempt(cursor, locked=True)
        if outcome is None:
            raise OrderNumberError(f"Stream {stream!r}: the locked state row changed under us.")
        return outcome

    def raise_to(self, stream: str, position: Position) -> tuple[Position | None, Position]:
        from ..models import OrderStreamState

        db = self._db()
        second, sequence = position
        rows = OrderStreamState.objects.using(db).filter(name=stream)
        before = rows.values_list("second", "sequence").first()
        # Two single statements, each atomic, and no locking read: a SELECT ... FOR UPDATE
        # of a missing row followed by an INSERT deadlocks InnoDB under concurrency.
        if before is None:
            OrderStreamState.objects.using(db).bulk_create(
                [OrderStreamState(name=stream, second=second, sequence=sequence)],
                ignore_conflicts=True,
            )
        rows.filter(Q(second__lt=second) | Q(second=second, sequence__lt=sequence)).update(
            second=second, sequence=sequence
        )
        after = rows.values_list("second", "sequence").get()
        return before, after

    def read(self, stream: str) -> Position | None:
        from ..models import OrderStreamState

        return (
            OrderStreamState.objects.using(self._db())
            .filter(name=stream)
            .values_list("second", "sequence")
            .first()
        )
