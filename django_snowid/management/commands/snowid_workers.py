"""``manage.py snowid_workers``: the live worker-id leases."""

from __future__ import annotations

import json
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...conf import conf
from ...exceptions import WorkerIdError
from ...leases.holder import LEASE_SOURCES, get_lease_store


class Command(BaseCommand):
    help = "List the live worker-id leases (Redis or database lease stores)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", dest="as_json")
        parser.add_argument("--all", action="store_true", help="Include expired leases.")

    def handle(self, *args: Any, as_json: bool, all: bool, **options: Any) -> None:
        source = conf.WORKER_ID_SOURCE
        if source not in LEASE_SOURCES or source == "slot":
            raise CommandError(
                f"SNOWID_WORKER_ID_SOURCE is {source!r}: there is no lease store to list "
                "(host-local slots are lock files; 'redis' and 'database' keep leases)."
            )
        try:
            leases = get_lease_store(source).leases()
        except WorkerIdError as exc:
            raise CommandError(str(exc)) from None
        now_ms = time.time_ns() // 1_000_000
        rows = [
            {
                "pool": lease.pool,
                "worker_id": lease.worker,
                "owner": lease.owner,
                "age_s": round((now_ms - lease.acquired_ms) / 1000, 1),
                "last_tick": lease.tick_bound,
                "expires_in_s": round((lease.expires_ms - now_ms) / 1000, 1),
            }
            for lease in leases
            if all or lease.expires_ms > now_ms
        ]
        if as_json:
            self.stdout.write(json.dumps(rows, indent=2))
            return
        if not rows:
            self.stdout.write(f"No live worker-id leases in the {source} store.")
            return
        header = ["pool", "worker_id", "owner", "age_s", "last_tick", "expires_in_s"]
        table = [header] + [[str(row[h]) for h in header] for row in rows]
        widths = [max(len(line[i]) for line in table) for i in range(len(header))]
        for line in table:
            cells = (cell.ljust(width) for cell, width in zip(line, widths, strict=True))
            self.stdout.write("  ".join(cells))
