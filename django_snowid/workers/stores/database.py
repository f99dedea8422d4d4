"""Worker-id leases in the database (the default store); for SQLite, beside it.

SQLite is shared by the processes of one host only, and takes one writer at a time: a
lease written on a connection of its own would wait for the write lock that the caller's
own transaction holds (the first id of a process is often made inside ``atomic()``). So
on SQLite the database source keeps its leases where that file's processes can all see
them without its lock: lock files beside the database file (``<NAME>-snowid-leases/``,
the slot store), and in this process's memory for an in-memory database (the test
runners'). Every store answers as ``base`` says."""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Any

from django.apps import apps
from django.db import DatabaseError, IntegrityError, connections, router, transaction
from django.db.models import Value
from django.db.models.functions import Greatest

from ...db.connections import on_own_connection
from ...db.private import is_in_memory_sqlite
from ...exceptions import WorkerIdUnavailable
from .base import Acquired, LeaseInfo, LeaseRequest, LeaseStore, exhausted
from .slot import SlotStore

__all__ = ["DatabaseLeaseStore", "ProcessLeaseStore"]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class ProcessLeaseStore:
    """Leases kept in this process's memory: for an in-memory SQLite database (the one
    Django's and pytest-django's test runners make), which no other process can see.

    Its ids can never meet another process's in that database, so a pool of this
    process is as unique as the database is shared; and a second connection to a
    shared-cache in-memory database could not write while a ``TestCase`` holds its
    transaction open.
    """

    name = "database"

    def __init__(self) -> None:
        self._pools: dict[str, dict[int, LeaseInfo]] = {}
        self._tokens: dict[tuple[str, int], str] = {}
        self._lock = threading.Lock()

    def acquire(self, request: LeaseRequest, *, top_down: bool = False) -> Acquired:
        now = _now_ms()
        pool, ids = request.pool, request.workers
        with self._lock:
            rows = self._pools.setdefault(pool, {})
            live = 0
            for worker in reversed(ids) if top_down else ids:
                row = rows.get(worker)
                if row is not None and row.expires_ms > now:
                    live += 1
                    continue
                bound = row.horizon_ms if row is not None else -1
                expires = now + request.ttl_ms
                rows[worker] = LeaseInfo(
                    pool, worker, request.owner, now, expires, bound, request.layout
                )
                self._tokens[(pool, worker)] = request.token
                return Acquired(worker, bound)
        raise exhausted(pool, request.size, live)

    def renew(
        self, pool: str, worker: int, token: str, ttl_ms: int, horizon_ms: int, *, layout: str = ""
    ) -> bool:
        now = _now_ms()
        with self._lock:
            row = self._pools.get(pool, {}).get(worker)
            if row is None or self._tokens.get((pool, worker)) != token or row.expires_ms <= now:
                return False
            self._pools[pool][worker] = LeaseInfo(
                pool,
                worker,
                row.owner,
                row.acquired_ms,
                now + ttl_ms if ttl_ms else 0,
                max(row.horizon_ms, horizon_ms),
                row.layout,
            )
            return True

    def release(self, pool: str, worker: int, token: str, horizon_ms: int) -> None:
        self.renew(pool, worker, token, 0, horizon_ms)

    def leases(self, pool: str | None = None) -> list[LeaseInfo]:
        with self._lock:
            rows = [r for p in self._pools.values() for r in p.values() if r.expires_ms > 0]
        return sorted(
            (r for r in rows if pool is None or r.pool == pool), key=lambda r: (r.pool, r.worker)
        )


class DatabaseLeaseStore:
    """Leases in a table of this app: a unique (pool, worker) row and conditional updates,
    written on a connection of their own in autocommit (``on_own_connection``).

    Expiry uses the app servers' clocks: keep them in sync (NTP) when several hosts share
    a pool.
    """

    name = "database"

    def __init__(self) -> None:
        # The database each lease was taken in (by token): a lease taken in a test
        # database is not renewed or released in the database named after the test run.
        self._taken_in: dict[str, str] = {}
        self._in_memory = ProcessLeaseStore()
        self._provisional: set[str] = set()  # tokens held before the table existed
        self._beside: dict[str, SlotStore] = {}  # SQLite files: their lock-file directory

    def _model(self) -> Any:
        # Looked up, not imported: the stores load with the fields, before the models.
        return apps.get_model("django_snowid", "WorkerLease")

    def _db(self) -> str:
        return router.db_for_write(self._model())

    def _database_name(self, db: str) -> str:
        return str(connections[db].settings_dict["NAME"])

    def _local(self, db: str) -> LeaseStore | None:
        """The store of an SQLite database (see the module docstring); None elsewhere."""
        connection = connections[db]
        if connection.vendor != "sqlite":
            return None
        if is_in_memory_sqlite(connection):
            return self._in_memory
        directory = f"{self._database_name(db)}-snowid-leases"
        store = self._beside.get(directory)
        if store is None:
            store = self._beside.setdefault(directory, SlotStore(directory))
        return store

    def forget_after_fork(self) -> None:
        for store in self._beside.values():
            store.forget_after_fork()

    def acquire(self, request: LeaseRequest) -> Acquired:
        db = self._db()
        local = self._local(db)
        if local is not None:
            return local.acquire(request)
        try:
            acquired = on_own_connection(lambda: self._acquire(db, request))
        except DatabaseError as exc:
            if not self._table_missing(db):
                raise WorkerIdUnavailable(
                    f"The database {db!r} is unreachable for worker-id leases: {exc}"
                ) from exc
            # A database being migrated from scratch (its first rows, django_migrations
            # included, need ids before this app's table exists): nobody can hold a lease
            # in it yet. Take one from the top of the pool (others start at the bottom) and
            # write it into the table at the first heartbeat after the table exists.
            acquired = self._in_memory.acquire(request, top_down=True)
            self._provisional.add(request.token)
        self._taken_in[request.token] = self._database_name(db)
        return acquired

    def _table_missing(self, db: str) -> bool:
        table = self._model()._meta.db_table
        try:
            return on_own_connection(
                lambda: table not in connections[db].introspection.table_names()
            )
        except DatabaseError:
            return False

    def _acquire(self, db: str, request: LeaseRequest) -> Acquired:
        model = self._model()
        pool, owner, token, layout = request.pool, request.owner, request.token, request.layout
        ids, ttl_ms = request.workers, request.ttl_ms
        rows = {
            r.worker: r
            for r in model.objects.using(db).filter(
                pool=pool, worker__gte=ids.start, worker__lt=ids.stop
            )
        }
        now = _now_ms()
        live = 0
        for worker in ids:
            row = rows.get(worker)
            if row is None:
                row = LeaseInfo(pool, worker, owner, now, now + ttl_ms, -1, layout)
                if self._create(db, row, token):
                    return Acquired(worker, -1)
                continue  # taken meanwhile
            if row.expires_ms > now:
                live += 1
                continue
            # Compare-and-set on the expiry we read: only one taker wins an expired lease.
            if (
                model.objects.using(db)
                .filter(pk=row.pk, expires_ms=row.expires_ms)
                .update(
                    owner=owner,
                    token=token,
                    acquired_ms=now,
                    expires_ms=now + ttl_ms,
                    layout=layout,
                )
            ):
                return Acquired(worker, row.horizon_ms)
        raise exhausted(pool, request.size, live)

    def renew(
        self, pool: str, worker: int, token: str, ttl_ms: int, horizon_ms: int, *, layout: str = ""
    ) -> bool:
        db = self._db()
        local = self._local(db)
        if local is not None:
            return local.renew(pool, worker, token, ttl_ms, horizon_ms, layout=layout)
        if self._taken_in.get(token) != self._database_name(db):
            return False  # taken in another database (a test database since dropped)
        owner = f"{socket.gethostname()}:{os.getpid()}"
        try:
            renewed = on_own_connection(
                lambda: self._renew(db, pool, worker, owner, token, ttl_ms, horizon_ms, layout)
            )
        except DatabaseError:
            if token in self._provisional and self._table_missing(db):
                return self._in_memory.renew(pool, worker, token, ttl_ms, horizon_ms)
            raise
        self._provisional.discard(token)
        if not ttl_ms:
            self._taken_in.pop(token, None)
        return renewed

    def _renew(
        self,
        db: str,
        pool: str,
        worker: int,
        owner: str,
        token: str,
        ttl_ms: int,
        horizon_ms: int,
        layout: str,
    ) -> bool:
        model = self._model()
        now = _now_ms()
        expires = now + ttl_ms if ttl_ms else 0
        rows = model.objects.using(db).filter(pool=pool, worker=worker, token=token)
        if rows.filter(expires_ms__gt=now).update(
            expires_ms=expires, horizon_ms=Greatest("horizon_ms", Value(horizon_ms))
        ):
            return True
        # No live row of ours. If the row is gone (the table was emptied, or it was
        # never written: a lease taken before the table existed), nobody else holds the
        # worker id: re-assert it, with our own horizon. Any row there, ours expired or
        # another holder's, means the lease is lost.
        row = LeaseInfo(pool, worker, owner, now, expires, horizon_ms, layout)
        return self._create(db, row, token)

    def _create(self, db: str, row: LeaseInfo, token: str) -> bool:
        """Insert the lease row ``row``; False if a row of its worker id is there already."""
        try:
            with transaction.atomic(using=db):
                self._model().objects.using(db).create(
                    pool=row.pool,
                    worker=row.worker,
                    owner=row.owner,
                    token=token,
                    acquired_ms=row.acquired_ms,
                    expires_ms=row.expires_ms,
                    horizon_ms=row.horizon_ms,
                    layout=row.layout,
                )
        except IntegrityError:
            return False
        return True

    def release(self, pool: str, worker: int, token: str, horizon_ms: int) -> None:
        local = self._local(self._db())
        if local is not None:  # a lock file is released by closing it, not by a record
            local.release(pool, worker, token, horizon_ms)
        else:
            self.renew(pool, worker, token, 0, horizon_ms)

    def leases(self, pool: str | None = None) -> list[LeaseInfo]:
        db = self._db()
        local = self._local(db)
        if local is not None:
            return local.leases(pool)
        rows = self._model().objects.using(db).all()  # released ones too: callers choose
        if pool:
            rows = rows.filter(pool=pool)
        try:
            # Committed rows, whatever the caller's transaction has seen (REPEATABLE READ).
            return on_own_connection(
                lambda: [
                    LeaseInfo(
                        r.pool,
                        r.worker,
                        r.owner,
                        r.acquired_ms,
                        r.expires_ms,
                        r.horizon_ms,
                        r.layout,
                    )
                    for r in rows.order_by("pool", "worker")
                ]
            )
        except DatabaseError:
            if not self._table_missing(db):
                raise
            return self._in_memory.leases(pool)  # a database being migrated from scratch
