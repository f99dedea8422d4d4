"""``manage.py snowid_adopt app_label.Model [...]``: switch existing models to Snowflake
ids without changing an existing id. Prints the plan; ``--execute`` carries it out."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DEFAULT_DB_ALIAS, connections

from ...adopt.plan import Plan
from ...adopt.run import adopted, current_plan, execute, undo
from ...exceptions import AdoptionError
from ._json import json_text


def _seconds(value: float) -> str:
    if value < 1:
        return "a moment"
    if value < 120:
        return f"~{value:.0f} s"
    return f"~{value / 60:.0f} min"


class Command(BaseCommand):
    help = (
        "Switch models from AutoField/BigAutoField to Snowflake ids, keeping every existing "
        "id: prints the plan (every column, lock and estimate); --execute carries it out "
        "(online on PostgreSQL), resuming a run that stopped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("labels", nargs="+", metavar="app_label.Model")
        parser.add_argument("--execute", action="store_true", help="Carry the plan out.")
        parser.add_argument(
            "--undo", action="store_true", help="Take back a switch stopped before its swap."
        )
        parser.add_argument("--database", default=DEFAULT_DB_ALIAS)
        parser.add_argument(
            "--plain",
            action="store_true",
            help="On PostgreSQL, the plain migration (tables rewritten under their lock) "
            "instead of the online steps.",
        )
        parser.add_argument(
            "--batch-size", type=int, default=10_000, help="Rows a backfill batch (10000)."
        )
        parser.add_argument(
            "--throttle", type=float, default=0.05, help="Seconds between batches (0.05)."
        )
        parser.add_argument(
            "--lock-timeout-ms",
            type=int,
            default=500,
            help="How long a short step waits for its lock before it retries (500).",
        )
        parser.add_argument(
            "--keep-sequence",
            action="store_true",
            help="Keep the old sequence (as bigint) for processes still inserting without ids; "
            "a later run without it drops it.",
        )
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args: Any, labels: list[str], **options: Any) -> None:
        using = options["database"]
        if using not in connections:
            raise CommandError(f"--database {using!r} is not in DATABASES.")
        if options["batch_size"] < 1:
            raise CommandError(
                f"--batch-size {options['batch_size']} is not a number of rows >= 1."
            )
        if options["throttle"] < 0 or options["lock_timeout_ms"] < 1:
            raise CommandError("--throttle must be >= 0 and --lock-timeout-ms >= 1.")
        try:
            for label in labels:
                self.one(label, using, options)
        except AdoptionError as exc:
            raise CommandError(str(exc)) from None

    def one(self, label: str, using: str, options: dict[str, Any]) -> None:
        if options["undo"]:
            undo(
                label,
                using=using,
                out=self.stdout.write,
                lock_timeout_ms=options["lock_timeout_ms"],
            )
            return
        if adopted(label, using=using):
            self.stdout.write(f"{label}: done; switched to Snowflake ids already.")
            return
        plan, resumed = current_plan(
            label,
            using=using,
            plain=options["plain"],
            keep_sequence=options["keep_sequence"],
            batch_size=options["batch_size"],
        )
        if options["as_json"] and not options["execute"]:
            self.stdout.write(json_text(plan.as_dict()))
            return
        self.show(plan, resumed)
        if not options["execute"]:
            return
        execute(
            label,
            plan,
            using=using,
            batch_size=options["batch_size"],
            throttle=options["throttle"],
            lock_timeout_ms=options["lock_timeout_ms"],
            out=self.stdout.write,
            progress=self.progress if options["verbosity"] >= 1 else None,
        )

    def progress(self, table: str, done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        self.stdout.write(
            f"  {table} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} rows",
            ending="\r" if sys.stdout.isatty() else "\n",
        )

    def show(self, plan: Plan, resumed: bool) -> None:
        facts, write = plan.facts, self.stdout.write
        how = (
            "online: shadow columns kept in sync by triggers"
            if plan.online
            else "the plain migration"
        )
        write(f"Switching {facts.label} to Snowflake ids on {facts.vendor} ({how}).")
        if resumed:
            write("Resuming the switch that stopped (its plan, from the journal).")
        write(
            f"No id changes. Largest id now: "
            f"{facts.old_max if facts.old_max is not None else 'none'}"
            f"; new ids start at {facts.first_id} or above, so ordering by pk follows creation."
        )
        write("Columns:")
        for c in facts.columns:
            change = (
                f"{c.db_type or 'integer'} -> bigint"
                if c.rewrite
                else f"{c.db_type or 'integer'} (holds 64 bits)"
            )
            write(f"  {c.table}.{c.column}  {c.kind}  {change}  {c.rows} rows  ({c.label})")
        if facts.sequence:
            write(f"  sequence {facts.sequence}  the old identity: dropped at the end")
        if not any(c.rewrite for c in facts.columns):
            write("Every column holds 64 bits already: no table is rewritten.")
        if facts.rebuilt:
            write("Made again on the new columns, as the catalog defines them:")
            for built in facts.rebuilt:
                write(f"  {built.kind} {built.name} of {built.table}")
        write("Steps:")
        for step in plan.steps:
            rows = f", {step.rows} rows" if step.rows else ""
            write(f"  {step.number}. {step.what}{rows}, {_seconds(step.seconds)}")
            write(f"     lock: {step.lock}")
        for note in facts.notes:
            write(f"Note: {note}")
        for refusal in facts.refusals:
            write(f"Cannot be done yet: {refusal}")
