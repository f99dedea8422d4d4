"""Worker-id leases of the ``database`` source: in a table of this app, or, on SQLite,
beside the database.

SQLite is shared by the processes of one host only, and takes one writer at a time: a
lease written on a connection of its own would wait for the write lock that the caller's
own transaction holds (the first id of a process is often made inside ``atomic()``). So
on SQLite the database source keeps its leases where that file's processes can all see
them without its lock: lock files beside the database file (``<NAME>-snowid-leases/``,
the slot store), and in this process's memory for an in-memory database (the test
runners'). :func:`store_for` picks one of the three for a database, once; each answers
as ``base`` says, with the guarantees it declares.

A missing table is never replaced by anything private to this process (every process
would lease the same worker id): the store refuses, naming ``migrate``. ``migrate`` itself
needs ids before the app's migration ran (django_migrations' rows), so :func:`pre_migrate`
creates the table first."""

from __future__ import annotations

import os
import socket
import threading
from typing import Any

from django.apps import apps
from django.db import DatabaseError, IntegrityError, connections, router, transaction
from django.db.models import Value
from django.db.models.functions import Greatest

from ...core.clocks import real_time_ns
from ...db.connections import on_own_connection
from ...db.errors import is_missing_table
from ...db.private import is_in_memory_sqlite
from ...db.tables import missing_message, missing_tables
from ...exceptions import WorkerIdUnavailable
from ...stores.base import Needs
from .base import Acquired, LeaseInfo, LeaseRequest, LeaseStore, exhausted
from .slot import SlotStore

__all__ = ["DatabaseLeaseStore", "ProcessLeaseStore", "configured", "pre_migrate", "store_for"]

#: One store a process per in-memory database: its leases are this process's memory.
_in_memory: dict[str, ProcessLeaseStore] = {}


def _now_ms() -> int:
    """Now on the host's clock, never one a test moved."""
    return real_time_ns() // 1_000_000


def _model() -> Any:
    # Looked up, not imported: the stores load with the fields, before the models.
    return apps.get_model("django_snowid", "WorkerLease")


def configured() -> LeaseStore:
    """The lease store of the database the lease table routes to."""
    return store_for(router.db_for_write(_model()))


def store_for(alias: str) -> LeaseStore:
    """The lease store of the database ``alias``: lock files beside an SQLite file, this
    process's memory for an in-memory SQLite database, the table anywhere else."""
    connection = connections[alias]
    name = str(connection.settings_dict["NAME"])
    if connection.vendor != "sqlite":
        return DatabaseLeaseStore(alias)
    if is_in_memory_sqlite(connection):
        return _in_memory.setdefault(name, ProcessLeaseStore())
    return SlotStore(f"{name}-snowid-leases", name="database", needs=Needs())


class ProcessLeaseStore:
    """Leases kept in this process's memory: for an in-memory SQLite database (the one
    Django's and pytest-django's test runners make), which no other process can see.

    Its ids can never meet another process's in that database, so a pool of this
    process is as unique as the database is shared; and a second connection to a
    shared-cache in-memory database could not write while a ``TestCase`` holds its
    transaction open.
    """

    name = "database"
    needs = Needs()
    frees_at_once = False  # a lease lasts its time-to-live, even in memory
    can_forget = False

    def __init__(self) -> None:
        self._pools: dict[str, dict[int, LeaseInfo]] = {}
        self._tokens: dict[tuple[str, int], str] = {}
        self._lock = threading.Lock()

    def acquire(self, request: LeaseRequest) -> Acquired:
        now = _now_ms()
        pool, ids = request.pool, request.workers
        with self._lock:
            rows = self._pools.setdefault(pool, {})
            live = 0
            for worker in ids:
                row = rows.get(worker)
                if row is not None and row.expires_ms > now:
                    live += 1
                    continue
                bound = row.horizon_ms if row is not None else -1
                expires = now + request.ttl_ms
                recorded = max(bound, request.horizon_ms)
                rows[worker] = LeaseInfo(
                    pool, worker, request.owner, now, expires, recorded, request.layout
                )
                self._tokens[(pool, worker)] = request.token
                return Acquired(worker, bound)
        raise exhausted(pool, request.size, live)

    def renew(
        self, pool: str, worker: int, token: str, ttl_ms: int, horizon_ms: int, *, layout: str = ""
    ) -> bool:
        return self._write(pool, worker, token, ttl_ms, horizon_ms, release=False)

    def release(self, pool: str, worker: int, token: str, horizon_ms: int) -> None:
        self._write(pool, worker, token, 0, horizon_ms, release=True)

    def _write(
        self, pool: str, worker: int, token: str, ttl_ms: int, horizon_ms: int, *, release: bool
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
                0 if release else now + ttl_ms,
                horizon_ms if release else max(row.horizon_ms, horizon_ms),
                row.layout,
            )
            return True

    def describe(self) -> str:
        return "this process's memory"

    def after_fork(self) -> None:
        pass  # nothing is held outside this process's memory

    def leases(self, pool: str | None = None) -> list[LeaseInfo]:
        with self._lock:
            rows = [r for p in self._pools.values() for r in p.values() if r.expires_ms > 0]
        return sorted(
            (r for r in rows if pool is None or r.pool == pool), key=lambda r: (r.pool, r.worker)
        )


class DatabaseLeaseStore:
    """Leases in a table of this app in the database ``alias``: a unique (pool, worker)
    row and conditional updates, written on a connection of their own in autocommit
    (``on_own_connection``). A dead holder's id stays taken until its row expires.

    Expiry uses the app servers' clocks: keep them in sync (NTP) when several hosts share
    a pool. Without its table it refuses (:class:`WorkerIdUnavailable` naming ``migrate``).
    """

    name = "database"
    needs = Needs(tables=("django_snowid.WorkerLease",))
    frees_at_once = False
    can_forget = False

    def __init__(self, alias: str) -> None:
        self.alias = alias
        # The database it leases in: a test runner renames it (test_<NAME>), and a lease
        # taken in the database since dropped is not renewed in the other one.
        self.database_name = self._database_name()

    def _database_name(self) -> str:
        return str(connections[self.alias].settings_dict["NAME"])

    def describe(self) -> str:
        return f"the database {self.alias!r}"

    def after_fork(self) -> None:
        pass  # no connection stays open between calls (on_own_connection)

    def _refusal(self, exc: DatabaseError) -> WorkerIdUnavailable:
        if is_missing_table(exc):
            return WorkerIdUnavailable(
                missing_message(
                    _model()._meta.db_table,
                    self.alias,
                    "worker-id leases live there, and no id is issued without one",
                )
            )
        return WorkerIdUnavailable(
            f"The database {self.alias!r} is unreachable for worker-id leases: {exc}"
        )

    def acquire(self, request: LeaseRequest) -> Acquired:
        try:
            return on_own_connection(lambda: self._acquire(request))
        except DatabaseError as exc:
            raise self._refusal(exc) from exc

    def _acquire(self, request: LeaseRequest) -> Acquired:
        db, model = self.alias, _model()
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
                row = LeaseInfo(pool, worker, owner, now, now + ttl_ms, request.horizon_ms, layout)
                if self._create(row, token):
                    return Acquired(worker, -1)
                continue  # taken meanwhile
            if row.expires_ms > now:
                live += 1
                continue
            # Compare-and-set on the expiry we read: only one taker wins an expired lease
            # (and nobody writes the horizon of an expired one: the one read is current).
            if (
                model.objects.using(db)
                .filter(pk=row.pk, expires_ms=row.expires_ms)
                .update(
                    owner=owner,
                    token=token,
                    acquired_ms=now,
                    expires_ms=now + ttl_ms,
                    horizon_ms=Greatest("horizon_ms", Value(request.horizon_ms)),
                    layout=layout,
                )
            ):
                return Acquired(worker, row.horizon_ms)
        raise exhausted(pool, request.size, live)

    def renew(
        self, pool: str, worker: int, token: str, ttl_ms: int, horizon_ms: int, *, layout: str = ""
    ) -> bool:
        return self._write(pool, worker, token, ttl_ms, horizon_ms, layout, release=False)

    def release(self, pool: str, worker: int, token: str, horizon_ms: int) -> None:
        self._write(pool, worker, token, 0, horizon_ms, "", release=True)

    def _write(
        self,
        pool: str,
        worker: int,
        token: str,
        ttl_ms: int,
        horizon_ms: int,
        layout: str,
        *,
        release: bool,
    ) -> bool:
        if self._database_name() != self.database_name:
            return False  # taken in another database (a test database since dropped)
        owner = f"{socket.gethostname()}:{os.getpid()}"
        try:
            return on_own_connection(
                lambda: self._renew(pool, worker, owner, token, ttl_ms, horizon_ms, layout, release)
            )
        except DatabaseError as exc:
            raise self._refusal(exc) from exc

    def _renew(
        self,
        pool: str,
        worker: int,
        owner: str,
        token: str,
        ttl_ms: int,
        horizon_ms: int,
        layout: str,
        release: bool,
    ) -> bool:
        model = _model()
        now = _now_ms()
        expires = 0 if release else now + ttl_ms
        # A renewal never lowers the horizon; a release records the last tick used.
        horizon = Value(horizon_ms) if release else Greatest("horizon_ms", Value(horizon_ms))
        rows = model.objects.using(self.alias).filter(pool=pool, worker=worker, token=token)
        if rows.filter(expires_ms__gt=now).update(expires_ms=expires, horizon_ms=horizon):
            return True
        # No live row of ours. If the row is gone (the table was emptied), nobody else
        # holds the worker id: re-assert it, with our own horizon. Any row there, ours expired or
        # another holder's, means the lease is lost.
        row = LeaseInfo(pool, worker, owner, now, expires, horizon_ms, layout)
        return self._create(row, token)

    def _create(self, row: LeaseInfo, token: str) -> bool:
        """Insert the lease row ``row``; False if a row of its worker id is there already."""
        try:
            with transaction.atomic(using=self.alias):
                _model().objects.using(self.alias).create(
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

    def leases(self, pool: str | None = None) -> list[LeaseInfo]:
        rows = _model().objects.using(self.alias).all()  # released ones too: callers choose
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
        except DatabaseError as exc:
            raise self._refusal(exc) from exc


def pre_migrate(*, using: str, apps: Any = None, **kwargs: Any) -> None:
    """Create the lease table in the database ``using`` before ``migrate`` records a
    migration (each record takes an id: ``DEFAULT_AUTO_FIELD``), unless it is there or
    routed elsewhere: in the shape of the app's applied migrations, or of its first one."""
    model = _model()
    if not missing_tables(using, [model]):
        return
    try:
        shaped = apps.get_model("django_snowid", "WorkerLease")  # the applied migrations'
    except (AttributeError, LookupError):
        from django.db.migrations.loader import MigrationLoader  # only when it is missing

        loader = MigrationLoader(None, ignore_no_migrations=True)
        first = ("django_snowid", "0001_initial")
        if first in loader.disk_migrations:
            shaped = loader.project_state(first).apps.get_model("django_snowid", "WorkerLease")
        else:  # migrations disabled for the app: its tables come from the models
            shaped = model
    if router.allow_migrate_model(using, shaped):
        with connections[using].schema_editor() as editor:
            editor.create_model(shaped)
