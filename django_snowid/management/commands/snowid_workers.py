"""``manage.py snowid_workers``: what the configured worker-id source holds."""

from __future__ import annotations

import glob
import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...conf import conf
from ...core.echo import table
from ...exceptions import SnowidError
from ...ids.database.install import database_fields
from ...ids.database.reservation import reservations
from ...stores.redis_client import describe
from ...workers.status import lease_rows
from ...workers.stores.base import horizon_text
from ...workers.stores.slot import read_record
from ._json import json_text
from ._store_errors import store_errors


def _held_inodes() -> set[tuple[int, int]] | None:
    """(device, inode) of every file some process holds a ``flock`` on (Linux's
    /proc/locks), or None where it cannot be known: asking by taking the lock ourselves
    would make a starting process skip that slot."""
    try:
        with open("/proc/locks") as locks:
            lines = locks.read().splitlines()
    except OSError:
        return None
    held = set()
    for line in lines:
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK":
            major, minor, inode = fields[5].split(":")
            held.add((os.makedev(int(major, 16), int(minor, 16)), int(inode)))
    return held


class Command(BaseCommand):
    help = (
        "List what the worker-id source (SNOWID_WORKER_ID_SOURCE) holds: the leases of "
        "the Redis or database store, or the slot lock files of this host."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="Print a JSON list of the rows."
        )
        parser.add_argument(
            "--all", action="store_true", help="Include expired leases and free slot files."
        )

    def handle(self, *args: Any, as_json: bool, all: bool, **options: Any) -> None:
        self._source_rows(as_json=as_json, all=all)
        if conf.WORKER_ID_SOURCE != "database" and not as_json and database_fields():
            # The database source lists them with its leases; other sources keep theirs
            # elsewhere, and the databases' node values are in the lease table.
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
        if source == "slot":
            rows, where = self._slots(all), f"the slot directory {conf.WORKER_SLOT_DIR}"
        elif source in ("redis", "database"):
            rows, where = self._leases(source, all), f"the {source} lease store"
        else:
            raise CommandError(
                f"SNOWID_WORKER_ID_SOURCE is {source!r}; expected 'static', 'env', 'slot', "
                "'redis' or 'database'."
            )
        if as_json:
            self.stdout.write(json_text(rows))
            return
        if not rows:
            what = "slot files" if source == "slot" else "leases"
            self.stdout.write(f"No {'' if all else 'live '}worker-id {what} in {where}.")
            return
        self._table(rows)

    def _table(self, rows: list[dict[str, Any]]) -> None:
        header = list(rows[0])
        for text in table([header, *([row[h] for h in header] for row in rows)]):
            self.stdout.write(text)

    def _leases(self, source: str, all: bool) -> list[dict[str, Any]]:
        errors: tuple[type[BaseException], ...] = (SnowidError, *store_errors())
        try:
            rows = lease_rows(expired=all)
        except errors as exc:
            where = f"Redis ({describe()})" if source == "redis" else "the database"
            raise CommandError(
                f"The {source} lease store in {where} could not be read: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        return rows

    def _slots(self, all: bool) -> list[dict[str, Any]]:
        directory = conf.WORKER_SLOT_DIR
        held = _held_inodes()
        rows = []
        for path in sorted(glob.glob(os.path.join(glob.escape(directory), "*.*.lock"))):
            pool, _, worker = os.path.basename(path)[: -len(".lock")].rpartition(".")
            try:
                info = os.stat(path)
                with open(path, "rb") as slot:
                    horizon_ms, layout = read_record(slot.fileno())
            except OSError as exc:
                raise CommandError(f"Cannot read the slot file {path}: {exc}") from None
            state = (
                "unknown"
                if held is None
                else ("held" if (info.st_dev, info.st_ino) in held else "free")
            )
            if state == "free" and not all:
                continue
            rows.append(
                {
                    "pool": pool,
                    "worker_id": worker,
                    "layout": layout,
                    "state": state,
                    "issued_until": horizon_text(horizon_ms),
                }
            )
        return rows
