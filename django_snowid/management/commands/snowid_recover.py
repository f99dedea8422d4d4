"""``manage.py snowid_recover``: never reissue an order number after a store lost its state.

For every order-number stream it reads ``max()`` of the stream's columns on every
database that can hold them (the primary, or every shard), and if the store holds less
(or nothing), resumes the stream at the second after both that and the store's clock,
past every number still in flight; it never lowers the store. ``--above`` adds columns
of other formats that new numbers must exceed. Safe at every deploy and while traffic
flows. It also reports Snowflake columns whose newest id
lies ahead of this host's clock (a worker id reused from a host whose clock ran ahead).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections, router

from ... import inventory
from ...adopt.columns import integer_column, largest_value
from ...core.echo import shown, table
from ...exceptions import InvalidId, OrderNumberError, OrderNumberUnavailable, SnowidError
from ...inventory import check_labels, column_max, field_label
from ...orders.issuer import fields_of_stream
from ...orders.recovery import database_position, databases_for, resume_past
from ...orders.stores import get_store
from ._json import json_text
from ._store_errors import reading, store_errors


def _position(fmt: Any, position: tuple[int, int] | None) -> str:
    if position is None:
        return "-"
    second, sequence = position
    if second <= 0:
        return "empty"
    return f"{fmt.stem_of_local_second(second):012d}#{sequence}"


class Command(BaseCommand):
    help = (
        "Recover every order-number stream whose store (Redis or the database) holds less "
        "than the largest number in the database: it resumes at the second after both that "
        "number and the store's clock. Never lowers the store."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("labels", nargs="*", metavar="app_label[.ModelName]")
        parser.add_argument("--dry-run", action="store_true", help="Report only; change nothing.")
        parser.add_argument(
            "--database",
            default=None,
            help="Read this database only (default: every database that can hold the rows, "
            "as the routers say; the primary otherwise).",
        )
        parser.add_argument(
            "--above",
            action="append",
            default=[],
            metavar="app_label.Model.field",
            help="Resume past this column's largest value too (numbers of another format, "
            "or an older column); repeatable.",
        )
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(
        self,
        *args: Any,
        labels: list[str],
        dry_run: bool,
        database: str | None,
        as_json: bool,
        above: list[str],
        **options: Any,
    ) -> None:
        if database is not None and database not in connections:
            raise CommandError(
                f"--database {shown(database)} is not in DATABASES ({', '.join(connections)})."
            )
        try:
            check_labels(
                labels, field_note="--above takes app_label.Model.field, a column to resume past"
            )
            columns = [integer_column(label) for label in above]
        except SnowidError as exc:
            raise CommandError(str(exc)) from None
        with reading(_aliases(columns, database)):
            above_values = [(column, largest_value(column, using=database)) for column in columns]
        store = get_store()
        rows = self._recover(
            inventory.order_fields(*labels), above_values, store, dry_run, database
        )
        snowflakes = inventory.fields("snowflake", *labels)
        with reading(_aliases(snowflakes, database)):
            ahead = _snowflakes_ahead(snowflakes, database)
        if as_json:
            self.stdout.write(json_text({"streams": rows, "snowflake_ahead": ahead}))
            return
        self._table(rows, dry_run=dry_run, backend=store.name)
        for item in ahead:
            self.stderr.write(
                f"WARNING {item['field']}: newest id {item['id']} was made at {item['time']}, "
                f"{item['ahead_s']:.3f} s ahead of this host's clock."
            )

    def _recover(
        self,
        order_fields: list[Any],
        above_values: list[tuple[Any, int | None]],
        store: Any,
        dry_run: bool,
        database: str | None,
    ) -> list[dict[str, Any]]:
        refused: tuple[type[BaseException], ...] = (OrderNumberError, *store_errors())
        streams: dict[str, Any] = {}
        for field in order_fields:
            streams.setdefault(field.stream, field)
        rows: list[dict[str, Any]] = []
        try:
            for field in streams.values():
                rows += _recover_stream(field, above_values, dry_run, database)
        except OrderNumberUnavailable as exc:
            raise CommandError(str(exc)) from None  # it names the store and says unreachable
        except refused as exc:
            # A key of the wrong type (WRONGTYPE), a state that does not parse, a table
            # missing: name the store and the problem, no traceback.
            raise CommandError(
                f"The {store.name} order-number store could not be read or raised: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        return rows

    def _table(self, rows: list[dict[str, Any]], *, dry_run: bool, backend: str) -> None:
        if not rows:
            self.stdout.write("No order-number fields found.")
            return
        header = ("field", "max in database", f"{backend} before", f"{backend} after", "")
        lines = [
            (
                r["field"],
                r["max_in_database"] or "-",
                r["store_before"],
                r["store_after"],
                ("would resume" if dry_run else "resumed") if r["changed"] else "unchanged",
            )
            for r in rows
        ]
        for text in table([header, *lines]):
            self.stdout.write(text)
        if dry_run:
            self.stdout.write("Dry run: nothing was changed.")


def _aliases(fields: list[Any], database: str | None) -> list[str]:
    return [database] if database else [db for f in fields for db in databases_for(f.model)]


def _position_past(
    fmt: Any,
    position: tuple[int, int] | None,
    above_values: list[tuple[Any, int | None]],
) -> tuple[int, int] | None:
    """``position``, or the first past a column of ``--above`` when that is further."""
    for column, largest in above_values:
        try:
            floor = None if largest is None else fmt.position_above(largest)
        except InvalidId as exc:
            raise CommandError(f"--above {field_label(column)}: {exc}") from None
        if floor is not None and (position is None or floor > position):
            position = floor
    return position


def _recover_stream(
    field: Any,
    above_values: list[tuple[Any, int | None]],
    dry_run: bool,
    database: str | None,
) -> list[dict[str, Any]]:
    """Resume ``field``'s stream past the database (a dry run: say what would be done)."""
    stream, fmt = field.stream, field.format
    fields = fields_of_stream(stream)
    with reading(_aliases(fields, database)):
        position, _, maxima = database_position(fields, fmt, using=database)
    position = _position_past(fmt, position, above_values)
    # A dry run is the store's own recovery, on its clock, writing nothing: it says what
    # the real run would do (a Redis state another server wrote included).
    before, after = resume_past(stream, fmt, position, dry_run=dry_run)
    return [
        {
            "field": field_label(each) + ("" if each in fields else " (--above)"),
            "stream": stream,
            "max_in_database": None if largest is None else str(largest),
            "store_before": _position(fmt, before),
            "store_after": _position(fmt, after),
            "changed": before != after,
        }
        for each, largest in [*maxima, *above_values]
    ]


def _snowflakes_ahead(fields: list[Any], database: str | None) -> list[dict[str, Any]]:
    now = datetime.now(timezone.utc)
    ahead = []
    for field in fields:
        largest = column_max(field, using=database or router.db_for_write(field.model))
        if largest is None:
            continue
        try:
            decoded = field.decode(largest)
        except SnowidError:
            continue
        if decoded.time > now:
            ahead.append(
                {
                    "field": field_label(field),
                    "id": str(largest),
                    "time": decoded.time.isoformat(),
                    "ahead_s": (decoded.time - now).total_seconds(),
                }
            )
    return ahead
