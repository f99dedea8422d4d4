"""``manage.py snowid_sequences``: named sequences with their marks, headroom and rates."""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections, router

from ...adopt.columns import integer_column, largest_value
from ...core import echo
from ...core.echo import shown
from ...core.sequence_plan import check_name
from ...exceptions import SequenceError, SnowidError
from ...sequences.from_django_sequences import TABLE, carry_over, continue_above
from ...sequences.status import raise_by, raise_if_low, sequence_rows
from ._json import json_text
from ._store_errors import reading

#: The largest value a sequence can hold (a signed BIGINT).
LARGEST = 2**63 - 1


def _number(kind: type, *, least: float, most: float) -> Any:
    """An argument type: a finite ``kind`` from ``least`` to ``most``."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            number = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{shown(text)} is not {number}") from None
        if not (math.isfinite(value) and least <= value <= most):
            upper = "2**63 - 1" if most == LARGEST else f"{most:g}"
            raise argparse.ArgumentTypeError(f"{shown(text)} is not from {least:g} to {upper}")
        return value

    return parse


def _check_installed() -> None:
    if not apps.is_installed("django_snowid.sequences"):
        raise CommandError(
            "Named sequences are an app of their own: add 'django_snowid.sequences' to "
            "INSTALLED_APPS (after 'django_snowid'), then run `manage.py migrate`."
        )


COLUMNS = ("stored", "current", "mark", "headroom", "minutes_left", "rate_last_s", "rate_5min")


class Command(BaseCommand):
    help = (
        "List the named sequences (current value, mark, headroom, rates); --raise NAME --by N "
        "raises a mark ahead of a known peak; --serve raises low marks as a long-lived process; "
        "--import-django-sequences makes every sequence of django-sequences' table continue "
        "above its last value (idempotent); --start-above app_label.Model.field NAME makes "
        "a sequence continue above a column's largest value."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", dest="as_json")
        parser.add_argument("--raise", dest="raise_name", metavar="NAME")
        parser.add_argument("--by", type=_number(int, least=1, most=LARGEST), metavar="N")
        parser.add_argument("--serve", action="store_true")
        parser.add_argument(
            "--interval",
            type=_number(float, least=0.001, most=86400),
            default=1.0,
            help="--serve: seconds",
        )
        parser.add_argument(
            "--rounds",
            type=_number(int, least=0, most=LARGEST),
            default=0,
            help="--serve: stop after N (0: never)",
        )
        parser.add_argument("--database", default=None)
        parser.add_argument(
            "--import-django-sequences",
            action="store_true",
            dest="import_django_sequences",
            help="carry django-sequences' values over (its table on --database)",
        )
        parser.add_argument(
            "--table", default=TABLE, help=f"--import-django-sequences: default {TABLE}"
        )
        parser.add_argument(
            "--start-above",
            nargs=2,
            metavar=("app_label.Model.field", "NAME"),
            help="make NAME continue above the column's largest value (never moves it back)",
        )

    def handle(
        self,
        *args: Any,
        as_json: bool,
        raise_name: str | None,
        by: int | None,
        serve: bool,
        interval: float,
        rounds: int,
        database: str | None,
        import_django_sequences: bool,
        table: str,
        start_above: list[str] | None,
        **options: Any,
    ) -> None:
        _check_installed()
        if database is not None and database not in connections:
            raise CommandError(
                f"--database {shown(database)} is not in DATABASES ({', '.join(connections)})."
            )
        if by is not None and raise_name is None:
            raise CommandError("--by goes with --raise NAME.")
        mark = apps.get_model("snowid_sequences", "SequenceMark")
        try:
            with reading([database or router.db_for_write(mark)]):
                if start_above is not None:
                    self._start_above(start_above[0], start_above[1], database)
                elif import_django_sequences:
                    self._import(table, database, as_json, options["verbosity"])
                elif raise_name is not None:
                    self._raise(raise_name, by, database)
                elif serve:
                    self._serve(interval, rounds, database, options["verbosity"])
                else:
                    self._list(as_json, database)
        except SequenceError as exc:
            raise CommandError(str(exc)) from None

    def _import(self, table: str, database: str | None, as_json: bool, verbosity: int) -> None:
        carried = carry_over(database, table)
        if as_json:
            self.stdout.write(json_text([vars(c) for c in carried]))
            return
        if verbosity >= 2:
            for c in carried:
                self.stdout.write(f"{c.name}: {c.last} -> continues above {c.continues_above}")
        if verbosity >= 1:
            self.stdout.write(f"Imported {len(carried)} sequences from {table}.")

    def _start_above(self, label: str, name: str, database: str | None) -> None:
        try:
            check_name(name)
            column = integer_column(label)
        except (ValueError, SnowidError) as exc:
            raise CommandError(str(exc)) from None
        largest = largest_value(column, using=database) or 0
        last = continue_above(name, largest, using=database)
        self.stdout.write(
            f"{name}: continues above {last} (the largest {column.model._meta.label}."
            f"{column.name} is {largest})"
        )

    def _raise(self, name: str, by: int | None, database: str | None) -> None:
        stored = name.split(":", 1)
        try:
            check_name(stored[0])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if by is None:
            raise CommandError("--raise NAME needs --by N: the number of values to raise it by.")
        mark = raise_by(name, by, database)
        self.stdout.write(f"{name}: mark raised to {mark}")

    def _serve(self, interval: float, rounds: int, database: str | None, verbosity: int) -> None:
        done = 0
        while not rounds or done < rounds:
            for stored in raise_if_low(database):
                if verbosity >= 1:
                    self.stdout.write(f"raised the mark of {stored}")
            done += 1
            if not rounds or done < rounds:
                time.sleep(interval)

    def _list(self, as_json: bool, database: str | None) -> None:
        rows = sequence_rows(database)
        if as_json:
            self.stdout.write(json_text(rows))
            return
        if not rows:
            self.stdout.write("No sequence has issued a value yet.")
            return
        lines = (["-" if row.get(c) is None else row[c] for c in COLUMNS] for row in rows)
        for text in echo.table([COLUMNS, *lines]):
            self.stdout.write(text)
