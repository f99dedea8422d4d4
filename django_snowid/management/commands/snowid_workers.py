"""``manage.py snowid_workers``: what the configured worker-id source holds."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...conf import conf
from ...core.echo import table
from ...exceptions import SnowidError
from ...ids.database.install import database_fields
from ...ids.database.reservation import reservations
from ...workers.status import lease_rows
from ...workers.stores import LEASES, get_lease_store
from ...workers.stores.base import LeaseStore
from ...workers.stores.database import DatabaseLeaseStore
from ...workers.stores.slot import SlotStore
from ._json import json_text
from ._store_errors import store_errors


class Command(BaseCommand):
    help = (
        "List what the worker-id source (SNOWID_WORKER_ID_SOURCE) holds: the leases of "
        "the Redis or database store, or the lock files of this host (the slot source, and "
        "the database source on an SQLite file)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="Print a JSON list of the rows."
        )
        parser.add_argument(
            "--all", action="store_true", help="Include expired leases and free lock files."
        )

    def handle(self, *args: Any, as_json: bool, all: bool, **options: Any) -> None:
        self._source_rows(as_json=as_json, all=all)
        store = get_lease_store() if LEASES.in_use() else None
        if not isinstance(store, DatabaseLeaseStore) and not as_json and database_fields():
            # The lease table lists them with its leases; the other stores keep theirs
            # elsewhere.
            reserved = reservations()
            if reserved:
                self.stdout.write("Node values reserved for databases (database ids):")
                self._table(reserved)

    def _source_rows(self, *, as_json: bool, all: bool) -> None:
        source = conf.WORKER_ID_SOURCE
        if source in ("static", "env"):
            self.stdout.write(
                f"SNOWID_WORKER_ID_SOURCE is {source!r}: the worker id is fixed "
                f"({'SNOWID_WORKER_ID' if source == 'static' else 'an environment variable'}),"
                " nothing is leased."
            )
            return
        try:
            store = get_lease_store()
        except SnowidError as exc:
            raise CommandError(str(exc)) from None
        if isinstance(store, SlotStore):  # the slot source, or the database one on SQLite
            rows, where, what = self._slots(store, all), store.describe(), "slot files"
        else:
            rows, where, what = self._leases(store, all), f"the {store.name} lease store", "leases"
        if as_json:
            self.stdout.write(json_text(rows))
            return
        if not rows:
            self.stdout.write(f"No {'' if all else 'live '}worker-id {what} in {where}.")
            return
        self._table(rows)

    def _table(self, rows: list[dict[str, Any]]) -> None:
        header = list(rows[0])
        for text in table([header, *([row[h] for h in header] for row in rows)]):
            self.stdout.write(text)

    def _leases(self, store: LeaseStore, all: bool) -> list[dict[str, Any]]:
        errors: tuple[type[BaseException], ...] = (SnowidError, *store_errors())
        try:
            rows = lease_rows(expired=all)
        except errors as exc:
            raise CommandError(
                f"The {store.name} lease store in {store.describe()} could not be read: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        return rows

    def _slots(self, store: SlotStore, all: bool) -> list[dict[str, Any]]:
        try:
            return store.lock_files(free=all)
        except OSError as exc:
            raise CommandError(f"Cannot read the slot file {exc.filename}: {exc}") from None
