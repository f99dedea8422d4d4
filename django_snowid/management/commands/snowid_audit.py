"""``manage.py snowid_audit``: read the columns of our fields and report what should never
happen; its exit status tells cron and CI what it found (``FOUND``, ``BAD_INPUT``)."""

from __future__ import annotations

import argparse
import math
import time
from datetime import datetime, timedelta, timezone
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, connections

from ...audit import KINDS, AuditReport, run_audit
from ...core.echo import shown
from ...exceptions import SnowidError
from ...inventory import check_labels
from ._json import json_text
from ._store_errors import database_failure, store_errors

#: The exit status of a run that found something, and of bad input (an unknown app or
#: model, a database not in ``DATABASES``, a table it could not read).
FOUND = 1
BAD_INPUT = 2


def _checked_labels(labels: list[str], models: list[str]) -> list[str]:
    """``labels`` if each names an installed app or model (``--model``: a model)."""
    for label in models:
        if "." not in label:
            raise CommandError(
                f"--model {shown(label)} is not app_label.ModelName.", returncode=BAD_INPUT
            )
    try:
        check_labels(labels)
    except SnowidError as exc:
        raise CommandError(str(exc), returncode=BAD_INPUT) from None
    return labels


def _positive(kind: type, what: str) -> Any:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
            if kind is float and math.isfinite(value):
                timedelta(seconds=value)  # seconds: within what a date-time can count
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"{shown(text)} is not a number of {what}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{shown(text)} is not a finite number of {what}")
        lowest = 1 if kind is int else 0
        if value < lowest:
            raise argparse.ArgumentTypeError(f"{shown(text)} is below {lowest}")
        return value

    return parse


def _audit(labels: list[str], **options: Any) -> AuditReport:
    """``run_audit`` of ``labels``; what it cannot read or build is bad input."""
    try:
        return run_audit(*labels, **options)
    except SnowidError as exc:  # a layout or format the settings do not build
        raise CommandError(str(exc), returncode=BAD_INPUT) from None
    except DatabaseError as exc:  # not migrated, or down
        aliases = [options["using"]] if options["using"] else list(connections)
        raise CommandError(database_failure(exc, aliases), returncode=BAD_INPUT) from None
    except store_errors() as exc:
        raise CommandError(
            f"The audit could not read a table: {exc}", returncode=BAD_INPUT
        ) from exc


class Command(BaseCommand):
    help = (
        "Read the columns of this app's fields (Snowflake ids, order numbers, sequence "
        "values) in batches and report what should never happen: ids and order numbers "
        "from the future or outside their layout or format, a worker id used twice in one "
        "tick, an order-number position issued twice, a sequence value above its mark. "
        f"Exits {FOUND} when it finds something, {BAD_INPUT} on bad input (an unknown app "
        "or model, a database not in DATABASES, a table it could not read), 0 otherwise."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "labels",
            nargs="*",
            metavar="app_label[.ModelName]",
            help="Audit these apps or models only (default: every installed model).",
        )
        parser.add_argument(
            "--model",
            action="append",
            default=[],
            metavar="app_label.ModelName",
            help="Audit this model only (repeatable; the same as a positional label).",
        )
        parser.add_argument(
            "--tolerance",
            type=_positive(float, "seconds"),
            default=60.0,
            help="Seconds past this host's clock an id may lie before it is 'from the "
            "future' (other hosts' clocks run a little ahead; default 60).",
        )
        parser.add_argument(
            "--batch-size",
            type=_positive(int, "rows"),
            default=10_000,
            help="Rows read per query (default 10,000): memory stays bounded by it.",
        )
        parser.add_argument(
            "--samples",
            type=_positive(int, "findings"),
            default=20,
            help="Findings listed per kind and field (all are counted; default 20).",
        )
        parser.add_argument(
            "--database",
            default=None,
            help="Read this database (default: each model's, as the routers say).",
        )
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print JSON.")

    def handle(
        self,
        *args: Any,
        labels: list[str],
        model: list[str],
        tolerance: float,
        batch_size: int,
        samples: int,
        database: str | None,
        as_json: bool,
        **options: Any,
    ) -> None:
        labels = _checked_labels([*labels, *model], model)
        if database is not None and database not in connections:
            raise CommandError(
                f"--database {shown(database)} is not in DATABASES ({', '.join(connections)}).",
                returncode=BAD_INPUT,
            )
        now = datetime.now(timezone.utc)
        started = time.perf_counter()
        audit = {"tolerance": timedelta(seconds=tolerance), "batch_size": batch_size}
        report = _audit(labels, now=now, samples=samples, using=database, **audit)
        seconds = time.perf_counter() - started
        if as_json:
            header = {"now": now.isoformat(), "tolerance_s": tolerance}
            body = {**header, "seconds": round(seconds, 3), **report.as_dict()}
            self.stdout.write(json_text(body))
        else:
            self._print(report, seconds, verbose=options["verbosity"] > 1)
        if report.total:
            raise SystemExit(FOUND)

    def _print(self, report: AuditReport, seconds: float, *, verbose: bool) -> None:
        rows = sum(report.rows.values())
        self.stdout.write(
            f"Audited {len(report.checked)} field(s), {rows:,} rows read, in {seconds:.1f} s."
        )
        if verbose:
            for label in report.checked:
                read = report.rows.get(label)
                what = f"{read:,} rows" if read is not None else "checked"
                self.stdout.write(f"  {label}: {what}")
        for note in report.notes:
            self.stdout.write(f"  {note}")
        for finding in report.findings:
            self.stdout.write(finding.line())
        if not report.total:
            self.stdout.write("No finding.")
            return
        if report.truncated:
            self.stdout.write(f"({report.total - len(report.findings)} more not listed: --samples)")
        counts = ", ".join(f"{kind} {n}" for kind, n in sorted(report.counts.items()))
        self.stderr.write(f"{report.total} finding(s): {counts}.")
        for kind in sorted(report.counts):
            self.stderr.write(f"  {kind}: {KINDS[kind]}")
