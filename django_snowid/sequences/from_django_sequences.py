"""Carry django-sequences' values over: every row of its table (``sequences_sequence``:
``name``, ``last``) makes our sequence of that name continue above ``last``.

All or nothing: every row is checked before anything is written (a name our table cannot
hold, a value below 0, a name declared daily), and the rows are read under lock. Idempotent:
a mark already at or above ``last`` is left as it is. The import records what it found
(:class:`~django_snowid.sequences.models.DjangoSequencesImport`); any change to that table
afterwards means old code still draws from it (:func:`changes_since_import`).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, connections, router, transaction
from django.utils import timezone

from ..exceptions import InvalidSequence, SequenceError
from .compat import MAX_NAME, MAX_VALUE
from .spec import SequenceSpec, get_spec
from .stores import get_store

__all__ = ["TABLE", "Carried", "carry_over", "changes_since_import"]

#: django-sequences' table (its app label ``sequences``, its model ``Sequence``).
TABLE = "sequences_sequence"


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


def _rows(connection: Any, table: str, *, lock: bool = False) -> dict[str, int]:
    qn = connection.ops.quote_name
    sql = f"SELECT {qn('name')}, {qn('last')} FROM {qn(table)} ORDER BY 1"
    if lock and connection.vendor != "sqlite":  # SQLite: the write transaction locks
        sql += " FOR UPDATE"
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return dict(cursor.fetchall())


def _checked(rows: dict[str, int]) -> list[tuple[SequenceSpec, str, int]]:
    """Every row as what to carry over; :class:`SequenceError` naming every bad row."""
    good, bad = [], []
    for name, last in rows.items():
        spec = _spec(name)
        if len(name) > MAX_NAME or not isinstance(last, int) or not 0 <= last <= MAX_VALUE:
            bad.append(
                f"{name!r} (last {last!r}): a name over {MAX_NAME} characters or a value below 0"
            )
        elif spec.daily:
            bad.append(
                f"{name!r} is declared daily in SNOWID_SEQUENCES: django-sequences' value "
                "belongs to no day. Import before declaring it daily, or under another name"
            )
        else:
            good.append((spec, name, last))
    if bad:
        raise InvalidSequence(f"Nothing was imported: {'; '.join(bad)}.")
    return good


def carry_over(using: str | None = None, table: str = TABLE) -> list[Carried]:
    """Import every row of django-sequences' ``table`` from the database ``using`` (default:
    the router's ``db_for_write`` for our marks), and record them; what each sequence
    continues above."""
    from .models import DjangoSequencesImport, SequenceMark

    alias = using or router.db_for_write(SequenceMark)
    connection = connections[alias]
    if table not in connection.introspection.table_names():
        raise SequenceError(
            f"The database {alias!r} has no table {table!r}: nothing to import (is it the "
            "database django-sequences used? --table names another table)."
        )
    store = get_store()
    # SQLite has one writer: a store that raises its marks on a connection of its own
    # (Redis) would wait for this transaction's lock. Its rows are checked first all the same.
    one_writer = connection.vendor == "sqlite" and store.raises_ahead
    with nullcontext() if one_writer else transaction.atomic(using=alias):
        rows = _rows(connection, table, lock=True)
        carried = [
            Carried(name, last, store.continue_above(spec, name, last, alias))
            for spec, name, last in _checked(rows)
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
