"""``manage.py snowid_decode ID [ID ...]``: take ids and order numbers apart."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from ...core.layout import DecodedId, iso_utc
from ...core.order_format import DecodedOrderNumber
from ...exceptions import SnowidError
from ...inventory import field_label, get_field
from ...readings import DecodedRow, decode_tokens
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
        reading = _reading(layout, field, order)
        try:
            rows = decode_tokens(ids, reading)
        except DatabaseError as exc:  # decoding needs no database: go on without rows
            self.stderr.write(f"The rows that hold these values were not looked up: {exc}")
            rows = decode_tokens(ids, reading, visible=lambda model: False)
        good = [row for row in rows if not row.error]
        detected = not reading
        if as_json:
            self.stdout.write(json_text([_item(row, detected=detected) for row in good]))
        else:
            verbose = options["verbosity"] > 1
            for row in good:
                self.stdout.write(_text(row, detected=detected, verbose=verbose))
        if len(good) < len(rows):
            # The valid ones are printed above; the others named here, and exit status 1.
            raise CommandError("\n".join(row.error for row in rows if row.error))


def _reading(layout: str | None, field: str | None, order: bool) -> str:
    """The reading of ``decode_tokens`` the options choose ("" detects), checked once."""
    try:
        if field:
            return f"field:{field_label(get_field(field))}"
        if layout:
            return f"layout:{get_layout(layout).name}"
    except SnowidError as exc:
        raise CommandError(str(exc)) from None
    return "order:" if order else ""


def _item(row: DecodedRow, *, detected: bool) -> dict[str, Any]:
    """A row as ``--json`` prints it (a legacy id: what it is, no parts)."""
    held = [{"field": h.label, "pk": str(h.pk)} for h in row.holders]
    if row.kind == "legacy":
        return {"id": str(row.value), "kind": "legacy", "note": row.note, "held_by": held}
    item: dict[str, Any] = row.decoded.as_dict()
    if detected:
        item["reading"] = f"{row.reading}, {row.why}"
        item["held_by"] = held
        item["other_readings"] = row.alternatives
    return item


def _text(row: DecodedRow, *, detected: bool, verbose: bool) -> str:
    """A row as one line of text: its parts, and (detected) its reading and rows."""
    if row.kind == "legacy":
        line = f"{row.value}  {row.note}"
    else:
        line = _line(row.decoded, verbose=verbose)
        if detected:
            line += f"  [read as {row.reading}, {row.why}]"
    line += "".join(f"  held by {h.label} pk={h.pk}" for h in row.holders if detected)
    if detected and verbose and row.alternatives:
        line += f"  (could also be: {'; '.join(row.alternatives)})"
    return line


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
