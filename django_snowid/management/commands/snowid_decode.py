"""``manage.py snowid_decode ID [ID ...]``: take ids and order numbers apart."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from ...core.layout import DecodedId, iso_utc
from ...core.order_format import DecodedOrderNumber
from ...exceptions import InvalidId, SnowidError
from ...inventory import get_field
from ...orders.formats import build_format
from ...readings import DecodedRow, decode_tokens, parse_token
from ...settings_layouts import get_layout
from ._json import json_text


class Command(BaseCommand):
    help = "Decode Snowflake ids or order numbers into their parts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ids", nargs="+", metavar="ID", help="Ids or order numbers to decode.")
        how = parser.add_mutually_exclusive_group()
        how.add_argument(
            "--layout",
            default=None,
            help=(
                "Read them as Snowflake ids of this configured layout. Without --layout, "
                "--field or --order, each value is read as the admin's decode page reads "
                "it (by the layout or order-number format whose row holds it, else whichever "
                "dates it plausibly), and the reading used and the rows are printed."
            ),
        )
        how.add_argument(
            "--field",
            default=None,
            metavar="app_label.Model.field",
            help="Read them the way this field of ours writes them.",
        )
        how.add_argument(
            "--order",
            action="store_true",
            help="Read them as order numbers of the default format (SNOWID_ORDER_*).",
        )
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="Print a JSON list."
        )

    def handle(
        self,
        *args: Any,
        ids: list[str],
        layout: str | None,
        field: str | None,
        order: bool,
        as_json: bool,
        **options: Any,
    ) -> None:
        readings: list[str] = []
        decoded: list[DecodedId | DecodedOrderNumber] = []
        detected: list[DecodedRow] = []
        errors: list[str] = []
        if not (field or order or layout):
            for raw in ids:  # before the rows are looked up: nothing is read for a typo
                try:
                    parse_token(raw)
                except InvalidId as exc:
                    errors.append(str(exc))
            if errors:
                raise CommandError("\n".join(errors))
            try:
                rows = decode_tokens(ids)
            except DatabaseError as exc:  # decoding needs no database: go on without rows
                self.stderr.write(f"The rows that hold these values were not looked up: {exc}")
                rows = decode_tokens(ids, visible=lambda model: False)
            for row in rows:
                if row.error:
                    errors.append(row.error)
                else:
                    decoded.append(row.decoded)
                    readings.append(f"{row.reading}, {row.why}")
                    detected.append(row)
        else:
            try:
                if field:
                    reader: Any = get_field(field)
                elif order:
                    reader = build_format()
                else:
                    reader = get_layout(layout)
            except SnowidError as exc:
                raise CommandError(str(exc)) from None
            for raw in ids:
                try:
                    decoded.append(reader.decode(raw))
                except InvalidId as exc:
                    errors.append(str(exc))
        if errors:
            # Nothing is printed for the good ones: a partial answer is easy to misread.
            raise CommandError("\n".join(errors))
        if as_json:
            items = [d.as_dict() for d in decoded]
            for item, reading, row in zip(items, readings, detected, strict=False):
                item["reading"] = reading
                item["held_by"] = [{"field": h.label, "pk": str(h.pk)} for h in row.holders]
                item["other_readings"] = row.alternatives
            self.stdout.write(json_text(items))
            return
        verbose = options["verbosity"] > 1
        for index, value in enumerate(decoded):
            line = _line(value, verbose=verbose)
            if readings:
                row = detected[index]
                line += f"  [read as {readings[index]}]"
                line += "".join(f"  held by {h.label} pk={h.pk}" for h in row.holders)
                if verbose and row.alternatives:
                    line += f"  (could also be: {'; '.join(row.alternatives)})"
            self.stdout.write(line)


def _line(item: DecodedId | DecodedOrderNumber, *, verbose: bool) -> str:
    # Both kinds print UTC the same way ("Z"); order numbers to the second, as their
    # stems are written.
    if isinstance(item, DecodedOrderNumber):
        when = iso_utc(item.time, milliseconds=False)
        line = (
            f"{item.value}  {when}  stem={item.stem:012d} sequence={item.sequence} "
            f"shard={item.shard}"
        )
        if item.visible_sequence is not None:
            line += f" shown_sequence={item.visible_sequence}"
        return line + (f"  ({item.format.describe()})" if verbose else "")
    parts = " ".join(f"{name}={value}" for name, value in item.parts.items())
    time = iso_utc(item.time, milliseconds=True)
    line = f"{item.value}  {time}  {parts}  sequence={item.sequence}"
    if item.layout.shard_bits:
        line += f" shard={item.shard}"
    if verbose:
        line += f"  (layout {item.layout.name}: {item.layout.describe()})"
    return line
