"""Where a stream's state lives: Redis (one Lua script per operation) or the database.

Both stores run :func:`django_snowid.core.sequence.reserve` atomically and answer with its
outcomes, or :data:`MISSING` when they hold no state for the stream (a new stream, or a
Redis that restarted or was flushed): the caller must then recover the state from the
database before anything is issued.
"""

from __future__ import annotations

import hashlib
import os
import random
import threading
import time
from typing import Any, Final, NamedTuple, Protocol

import redis
from django.db import OperationalError, router, transaction

from ..core.sequence import ClockBehind, Outcome, Reserved, Resuming, SecondFull, reserve, resume
from ..exceptions import OrderNumberError, OrderNumberUnavailable, OrderTransactionConflict
from .redischannel import Channel, Request

__all__ = [
    "MISSING",
    "DatabaseOrderStore",
    "OrderStore",
    "RecoverArgs",
    "RedisOrderStore",
    "ReserveArgs",
    "is_contention",
]


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


class RecoverArgs(NamedTuple):
    """What a recovery needs besides the stream (see ``core.sequence.resume``)."""

    offset: int  # the zone's UTC offset in seconds
    first_sequence: int  # of the second the stream resumes at
    force: bool  # resume past the store's clock even if the store is ahead of the database


class OrderStore(Protocol):
    name: str

    def reserve(self, stream: str, args: ReserveArgs) -> Outcome | _Missing: ...

    def recover(
        self, stream: str, database: Position | None, args: RecoverArgs
    ) -> tuple[Position | None, Position]:
        """Apply ``core.sequence.resume`` atomically, on the store's own clock.

        Returns (state before, state after).
        """
        ...

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
# {3, seconds_behind}: the clock is too far behind; {4}: no state; {5}: the state is garbage;
# {6, wait_ms}: the stream was recovered and resumes when the clock reaches its second.
RESERVE_LUA: Final = """
local state = redis.call('HMGET', KEYS[1], 'sec', 'seq', 'hold')
if not state[1] then return {4} end
local second, sequence = tonumber(state[1]), tonumber(state[2])
if not second or not sequence then return {5} end
local t = redis.call('TIME')
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


# Recover a stream: the same steps as core.sequence.resume(), on the clock of Redis.
# A stream that resumes at the second after the clock's is held there (field "hold")
# until the clock reaches it: numbers are then never issued ahead of the clock, so the
# clock of a later recovery is past every number of a state lost meanwhile.
# KEYS[1]: the stream's state hash
# ARGV[1]: 1 if the database holds a number of the stream, else 0
# ARGV[2], ARGV[3]: local second and sequence of the database's largest number
# ARGV[4]: the zone's UTC offset in seconds   ARGV[5]: first sequence   ARGV[6]: force (0/1)
# Returns {had_state (0/1), before_second, before_sequence, after_second, after_sequence}.
RECOVER_LUA: Final = """
local state = redis.call('HMGET', KEYS[1], 'sec', 'seq')
local bs, bq = tonumber(state[1]), tonumber(state[2])
local had = bs ~= nil and bq ~= nil
local has_db, ds, dq = ARGV[1] == '1', tonumber(ARGV[2]), tonumber(ARGV[3])
if had and ARGV[6] ~= '1' and (not has_db or bs > ds or (bs == ds and bq >= dq)) then
  return {1, bs, bq, bs, bq}
end
local now = tonumber(redis.call('TIME')[1]) + tonumber(ARGV[4])
local ts, tq = now + 1, tonumber(ARGV[5]) - 1
if has_db and ds >= now then ts = ds + 1 end
if had and (bs > ts or (bs == ts and bq >= tq)) then
  return {1, bs, bq, bs, bq}
end
if ts == now + 1 then
  redis.call('HSET', KEYS[1], 'sec', ts, 'seq', tq, 'hold', ts)
else
  redis.call('HSET', KEYS[1], 'sec', ts, 'seq', tq)
  redis.call('HDEL', KEYS[1], 'hold')
end
if had then return {1, bs, bq, ts, tq} end
return {0, 0, 0, ts, tq}
"""

RESERVE_SHA: Final = hashlib.sha1(RESERVE_LUA.encode()).hexdigest()
RAISE_SHA: Final = hashlib.sha1(RAISE_LUA.encode()).hexdigest()
RECOVER_SHA: Final = hashlib.sha1(RECOVER_LUA.encode()).hexdigest()
_SCRIPTS: Final = {RESERVE_SHA: RESERVE_LUA, RAISE_SHA: RAISE_LUA, RECOVER_SHA: RECOVER_LUA}


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
        if status == 6:
            return Resuming(reply[1])
        raise OrderNumberError(
            f"The Redis key {sent.key!r} does not hold an order-number state "
            "(fields sec and seq as integers). Delete it and run manage.py snowid_recover."
        )

    def reserve(self, stream: str, args: ReserveArgs) -> Outcome | _Missing:
        return self.reserve_result(self.send_reserve(stream, args))

    def raise_to(self, stream: str, position: Position) -> tuple[Position | None, Position]:
        return self._before_after(self._result(RAISE_SHA, self.key(stream), tuple(position), None))

    def recover(
        self, stream: str, database: Position | None, args: RecoverArgs
    ) -> tuple[Position | None, Position]:
        second, sequence = database or (0, 0)
        argv = (int(database is not None), second, sequence, *args[:2], int(args.force))
        return self._before_after(self._result(RECOVER_SHA, self.key(stream), argv, None))

    @staticmethod
    def _before_after(reply: Any) -> tuple[Position | None, Position]:
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
#: SQLSTATEs of a serialization failure, a deadlock victim and a lock that was not granted.
_CONTENTION_SQLSTATES: Final = frozenset({"40001", "40P01", "55P03"})
#: MySQL/MariaDB: lock wait timeout, deadlock.
_CONTENTION_ERRNOS: Final = frozenset({1205, 1213})
_OWN_TRANSACTION_TRIES: Final = 8


def is_contention(exc: BaseException) -> bool:
    """A deadlock, a lock timeout or a serialization failure: the server is reachable,
    the transaction lost a race and may be run again."""
    cause = exc.__cause__ or exc
    code = getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)
    if code in _CONTENTION_SQLSTATES:
        return True
    args = getattr(cause, "args", ())
    if args and args[0] in _CONTENTION_ERRNOS:
        return True
    return "database is locked" in str(exc)  # SQLite's busy timeout ran out


class DatabaseOrderStore:
    """The state of every stream in a table of this app, one row per stream.

    Outside a transaction a reservation reads the row and writes it back with a
    compare-and-set (``UPDATE ... WHERE second = <read> AND sequence = <read>``): two
    statements, no explicit transaction; a writer that loses the race twice takes the
    row lock. Inside a transaction it takes the row lock at once with a locking read
    (``SELECT ... FOR UPDATE``), so that under REPEATABLE READ or SERIALIZABLE it decides
    on the current row, never on the transaction's snapshot; the row stays locked until
    the transaction ends (with ATOMIC_REQUESTS, requests that issue numbers of one
    stream run one after the other). A row is created, raised or recovered by one
    statement (an upsert), which cannot deadlock with another one creating it.

    Deadlocks, lock timeouts and serialization failures are retried when the store runs
    its own transaction; inside the caller's they raise :class:`OrderTransactionConflict`.
    """

    name = "database"

    def __init__(self, using: str | None = None) -> None:
        self.using = using

    def _db(self) -> str:
        from ..models import OrderStreamState

        return self.using or router.db_for_write(OrderStreamState)

    def _run(self, operation: Any, *args: Any) -> Any:
        """``operation(db, *args)``, with the database's errors made ours."""
        db = self._db()
        in_transaction = transaction.get_connection(db).in_atomic_block
        for attempt in range(_OWN_TRANSACTION_TRIES):
            try:
                return operation(db, *args)
            except OperationalError as exc:
                if not is_contention(exc):  # connection lost or refused
                    raise OrderNumberUnavailable(
                        f"The database {db!r} is unreachable for order numbers: "
                        f"{str(exc).rstrip('.')}. No order number was issued."
                    ) from exc
                if in_transaction or attempt == _OWN_TRANSACTION_TRIES - 1:
                    raise OrderTransactionConflict(
                        f"The database {db!r} reported a deadlock, a lock timeout or a "
                        f"serialization failure on the order-number state: {exc}. Nothing "
                        "was issued; roll back and run the transaction again."
                    ) from exc
                time.sleep(random.uniform(0.001, 0.01) * (attempt + 1))  # let the winner finish
        raise AssertionError("unreachable")  # the loop returns or raises

    def reserve(self, stream: str, args: ReserveArgs) -> Outcome | _Missing:
        return self._run(self._reserve, stream, *args)

    def _sql(self, connection: Any) -> dict[str, str]:
        from ..models import OrderStreamState

        qn = connection.ops.quote_name
        table = qn(OrderStreamState._meta.db_table)
        name, second, sequence = qn("name"), qn("second"), qn("sequence")
        select = f"SELECT {second}, {sequence} FROM {table} WHERE {name} = %s"
        lower = f"({second} < %s OR ({second} = %s AND {sequence} < %s))"
        insert = f"INSERT INTO {table} ({name}, {second}, {sequence}) VALUES (%s, %s, %s)"
        if connection.vendor == "mysql":
            # Assignments run left to right: the condition is kept in a variable before
            # the first one changes what it reads.
            upsert = (
                f"{insert} ON DUPLICATE KEY UPDATE "
                f"{sequence} = IF(@snowid_lower := {lower}, VALUES({sequence}), {sequence}), "
                f"{second} = IF(@snowid_lower, VALUES({second}), {second})"
            )
        else:  # PostgreSQL, SQLite 3.24+
            row_second, row_sequence = f"{table}.{second}", f"{table}.{sequence}"
            upsert = (
                f"{insert} ON CONFLICT ({name}) DO UPDATE SET {second} = EXCLUDED.{second}, "
                f"{sequence} = EXCLUDED.{sequence} WHERE {row_second} < %s "
                f"OR ({row_second} = %s AND {row_sequence} < %s)"
            )
        return {
            "select": select,
            "select_locked": select if connection.vendor == "sqlite" else f"{select} FOR UPDATE",
            # SQLite has no FOR UPDATE: writing the row takes the database's write lock.
            "lock": f"UPDATE {table} SET {sequence} = {sequence} WHERE {name} = %s",
            "compare_and_set": (
                f"UPDATE {table} SET {second} = %s, {sequence} = %s "
                f"WHERE {name} = %s AND {second} = %s AND {sequence} = %s"
            ),
            "upsert": upsert,
        }

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
        connection = transaction.get_connection(db)
        sql = self._sql(connection)
        sqlite = connection.vendor == "sqlite"

        def attempt(cursor: Any, *, locked: bool) -> Outcome | _Missing | None:
            if locked and sqlite:
                cursor.execute(sql["lock"], [stream])
                if cursor.rowcount == 0:
                    return MISSING
            cursor.execute(sql["select_locked" if locked else "select"], [stream])
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
            cursor.execute(sql["compare_and_set"], [*state, stream, *last])
            return outcome if cursor.rowcount == 1 else None

        if not connection.in_atomic_block:
            # Optimistic first: two statements, each its own transaction (so each reads
            # the current row at any isolation level). A writer that lost the race takes
            # the row lock instead, so nobody starves under contention.
            with connection.cursor() as cursor:
                for _ in range(2):
                    outcome = attempt(cursor, locked=False)
                    if outcome is not None:
                        return outcome
        with transaction.atomic(using=db), connection.cursor() as cursor:
            outcome = attempt(cursor, locked=True)
        if outcome is None:
            raise OrderNumberError(f"Stream {stream!r}: the locked state row changed under us.")
        return outcome

    def _upsert(
        self, db: str, stream: str, below: Position, target: Position
    ) -> tuple[Position | None, Position]:
        """Create the row at ``target``, or move it to ``target`` if it is below ``below``:
        one statement, which creates the row or waits for whoever is creating it."""
        connection = transaction.get_connection(db)
        sql = self._sql(connection)
        with transaction.atomic(using=db), connection.cursor() as cursor:
            # "Before" is for reports only: a plain read, because a locking read of a
            # missing row takes a gap lock in InnoDB, and two such upserts deadlock.
            cursor.execute(sql["select"], [stream])
            row = cursor.fetchone()
            cursor.execute(sql["upsert"], [stream, *target, below[0], below[0], below[1]])
            cursor.execute(sql["select_locked"], [stream])
            after = cursor.fetchone()
        before = None if row is None else (int(row[0]), int(row[1]))
        return before, (int(after[0]), int(after[1]))

    def raise_to(self, stream: str, position: Position) -> tuple[Position | None, Position]:
        return self._run(self._upsert, stream, tuple(position), tuple(position))

    def recover(
        self, stream: str, database: Position | None, args: RecoverArgs
    ) -> tuple[Position | None, Position]:
        def operation(db: str) -> tuple[Position | None, Position]:
            now = int(time.time()) + args.offset  # the clock of this app server
            target = resume(None, database, now, first_sequence=args.first_sequence)
            # resume() in one statement: a row below the database (or, forced, below the
            # target) moves to the target; a missing row is created there.
            below = target if args.force else (database or (0, 0))
            return self._upsert(db, stream, below, target)

        return self._run(operation)

    def read(self, stream: str) -> Position | None:
        from ..models import OrderStreamState

        return (
            OrderStreamState.objects.using(self._db())
            .filter(name=stream)
            .values_list("second", "sequence")
            .first()
        )
