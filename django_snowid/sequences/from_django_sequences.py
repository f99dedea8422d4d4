"""Carry django-sequences' values over: every row of its table makes our sequence of that
name continue above ``last``; all or nothing, idempotent, recorded for
:func:`changes_since_import`."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, connections, router, transaction
from django.utils import timezone

from ..core.echo import shown
from ..exceptions import InvalidSequence, SequenceError
from .compat import MAX_VALUE
from .spec import SequenceSpec, get_spec
from .stores import get_store

__all__ = ["TABLE", "Carried", "carry_over", "changes_since_import", "continue_above"]

#: django-sequences' table (its app label ``sequences``, its model ``Sequence``).
TABLE = "sequences_sequence"
#: The longest name the compat module takes (django-sequences' column).
LONGEST_NAME = 100


@dataclass(frozen=True)
class Carried:
    name: str
    last: int  # django-sequences' last value
    continues_above: int  # our sequence's last value now


def _spec(name: str) -> SequenceSpec:
    try:
        spec = get_spec(name)
    except SequenceError:  # undeclared under "refuse", or a name our API refuses
        return SequenceSpec(name)
    return spec


def _refusal(name: Any, last: Any) -> str:
    """Why a row of django-sequences' table cannot be carried over; ``""`` if it can."""
    if not isinstance(name, str) or not 1 <= len(name) <= LONGEST_NAME:
        length = f" ({len(name):,} characters)" if isinstance(name, str) else ""
        return f"{shown(name)}{length}: not a name of 1 to {LONGEST_NAME} characters"
    if isinstance(last, bool) or not isinstance(last, int) or not 0 <= last <= MAX_VALUE:
        return f"{shown(name)}: last is {shown(last)}, not an integer from 0 to {MAX_VALUE}"
    if _spec(name).daily:
        return (
            f"{shown(name)} is declared daily in SNOWID_SEQUENCES: django-sequences' value "
            "belongs to no day. Import before declaring it daily, or under another name"
        )
    return ""


def _rows(connection: Any, table: str, *, lock: bool = False) -> dict[str, int]:
    qn = connection.ops.quote_name
    sql = f"SELECT {qn('name')}, {qn('last')} FROM {qn(table)} ORDER BY 1"
    if lock and connection.vendor != "sqlite":
        sql += " FOR UPDATE"
    with connection.cursor() as cursor:
        if lock and connection.vendor == "sqlite":
            # The write lock first: a read lock upgraded later fails at once while another
            # writer is busy, where taking it first waits for that writer.
            cursor.execute(f"UPDATE {qn(table)} SET {qn('last')} = {qn('last')} WHERE 0 = 1")
        cursor.execute(sql)
        return dict(cursor.fetchall())


def _checked(table: str, rows: dict[str, int]) -> list[tuple[SequenceSpec, str, int]]:
    """Every row as what to carry over; :class:`InvalidSequence` naming the bad rows."""
    refused = [problem for name, last in rows.items() if (problem := _refusal(name, last))]
    if refused:
        more = f" (and {len(refused) - 3} more)" if len(refused) > 3 else ""
        raise InvalidSequence(
            f"{len(refused)} row(s) of {shown(table)} cannot be carried over: "
            f"{'; '.join(refused[:3])}{more}. Nothing was imported."
        )
    return [(_spec(name), name, last) for name, last in rows.items()]


def carry_over(using: str | None = None, table: str = TABLE) -> list[Carried]:
    """Import every row of django-sequences' ``table`` from the database ``using`` (default:
    the router's ``db_for_write`` for our marks), and record them; what each sequence
    continues above."""
    from .models import DjangoSequencesImport, SequenceMark

    alias = using or router.db_for_write(SequenceMark)
    connection = connections[alias]
    if table not in connection.introspection.table_names():
        raise SequenceError(
            f"The database {alias!r} has no table {shown(table)}: nothing to import (is it the "
            "database django-sequences used? --table names another table)."
        )
    with connection.cursor() as cursor:
        columns = {c.name for c in connection.introspection.get_table_description(cursor, table)}
    absent = [c for c in ("name", "last") if c not in columns]
    if absent:
        raise SequenceError(
            f"The table {shown(table)} on {alias!r} has no column {absent[0]!r}: it is not "
            "django-sequences' table (name, last). Nothing was imported."
        )
    store = get_store()
    # SQLite has one writer: a store raising marks on its own connection would wait here.
    one_writer = connection.vendor == "sqlite" and store.raises_ahead
    with nullcontext() if one_writer else transaction.atomic(using=alias):
        rows = _rows(connection, table, lock=True)
        carried = [
            Carried(name, last, store.continue_above(spec, name, last, alias))
            for spec, name, last in _checked(table, rows)
        ]
        DjangoSequencesImport.objects.using(alias).update_or_create(
            table=table, defaults={"rows": rows, "imported_at": timezone.now()}
        )
    return carried


def changes_since_import(alias: str) -> list[tuple[str, str]]:
    """``(table, what changed)`` for each imported django-sequences table of the database
    ``alias`` that changed since its import (its name, and the sequences that changed)."""
    from .models import DjangoSequencesImport

    connection = connections[alias]
    found = []
    try:
        imports = list(DjangoSequencesImport.objects.using(alias).order_by("table"))
        tables = set(connection.introspection.table_names()) if imports else set()
        for record in imports:
            if record.table not in tables:
                continue  # dropped with django-sequences: nobody draws from it
            now = _rows(connection, record.table)
            changed = [
                f"{name!r} {_change(record.rows.get(name), now.get(name))}"
                for name in sorted(set(now) | set(record.rows))
                if now.get(name) != record.rows.get(name)
            ]
            if changed:
                found.append((record, changed))
    except DatabaseError:
        return []  # not migrated yet, or unreachable: other checks say so
    return [
        (
            record.table,
            f"{len(changed)} sequence(s) changed since the import of "
            f"{record.imported_at.isoformat(timespec='seconds')}: {', '.join(changed[:5])}"
            + (f" and {len(changed) - 5} more" if len(changed) > 5 else ""),
        )
        for record, changed in found
    ]


def _change(before: int | None, after: int | None) -> str:
    if before is None:
        return f"(new, at {after})"
    if after is None:
        return f"(deleted, was {before})"
    return f"({before} -> {after})"


def _refuse_daily(name: str, what: str) -> SequenceSpec:
    spec = _spec(name)
    if spec.daily:
        raise SequenceError(
            f"{name!r} is declared daily in SNOWID_SEQUENCES: {what} belongs to no day. "
            "Continue above it before declaring it daily, or under another name."
        )
    return spec


def continue_above(name: str, value: int, *, using: str | None = None) -> int:
    """Make the sequence ``name`` continue above ``value`` (never moving it back): its
    next value is ``value + 1`` or more. The sequence's last value now."""
    spec = _refuse_daily(name, f"{value}")
    return get_store().continue_above(spec, name, value, using)
