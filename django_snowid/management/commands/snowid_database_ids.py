"""``manage.py snowid_database_ids``: the columns with ``database_ids=True`` and their
database default (``status``, the default action; ``--check`` exits 1 when one is not
``ok``), or ``install`` the SQL functions and record the node reservations now."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, connections

from ...core.echo import shown
from ...exceptions import SnowidError
from ...ids.database.install import install, record_all
from ...ids.database.status import column_rows
from ._json import json_text


class Command(BaseCommand):
    help = (
        "List the columns with database_ids=True and whether each PostgreSQL database gives "
        "them our default (status; --check exits 1 when one does not), or install the SQL "
        "functions and record each database's node value (install)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", nargs="?", choices=["status", "install"], default="status")
        parser.add_argument("--database", default=None, help="One database alias (default: all).")
        parser.add_argument(
            "--check", action="store_true", help="Exit 1 when a column's default is not ok."
        )
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="Print a JSON list of the rows."
        )

    def handle(
        self,
        *args: Any,
        action: str,
        database: str | None,
        check: bool,
        as_json: bool,
        **options: Any,
    ) -> None:
        if database is not None and database not in connections:
            raise CommandError(f"{shown(database)} is not a database alias of DATABASES.")
        try:
            if action == "install":
                self._install([database] if database else list(connections))
                return
            rows = column_rows(database)
        except (DatabaseError, SnowidError) as exc:
            raise CommandError(f"{type(exc).__name__}: {exc}") from None
        if as_json:
            self.stdout.write(json_text(rows))
        elif not rows:
            self.stdout.write("No column with database_ids=True on a PostgreSQL database.")
        for row in [] if as_json else rows:
            self.stdout.write(
                f"{row['database']}  {row['field']}  {row['table']}.{row['column']}  "
                f"node {row['node']}  {row['state']}"
                + ("" if row["state"] == "ok" else f"  (default: {row['default'] or 'none'})")
            )
        bad = [row for row in rows if row["state"] != "ok"]
        if check and bad:
            listed = ", ".join(
                f"{r['database']}:{r['table']}.{r['column']} ({r['state']})" for r in bad
            )
            raise CommandError(f"{len(bad)} column(s) lack our database default: {listed}")

    def _install(self, aliases: list[str]) -> None:
        for alias in aliases:
            installed = install(alias)
            record_all(alias)
            for geometry in installed:
                self.stdout.write(f"{alias}: installed {geometry.function}()")
