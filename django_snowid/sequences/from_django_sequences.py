"""Carry django-sequences' values over: every row of its table (``sequences_sequence``:
``name``, ``last``) makes our sequence of that name continue above ``last``.

Idempotent: a mark already at or above ``last`` is left as it is, so running it again,
or after our sequences issued more values, changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connections, router

from ..core.echo import shown
from ..exceptions import SequenceError
from .spec import SequenceSpec, get_spec
from .stores import get_store

__all__ = ["TABLE", "Carried", "carry_over", "continue_above"]

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
    if isinstance(last, bool) or not isinstance(last, int) or last < 0:
        return f"{shown(name)}: last is {shown(last)}, not an integer >= 0"
    return ""


def carry_over(using: str | None = None, table: str = TABLE) -> list[Carried]:
    """Import every row of django-sequences' ``table`` from the database ``using`` (default:
    the router's ``db_for_write`` for our marks); what each sequence continues above."""
    from .models import SequenceMark

    alias = using or router.db_for_write(SequenceMark)
    connection = connections[alias]
    if table not in connection.introspection.table_names():
        raise SequenceError(
            f"The database {alias!r} has no table {shown(table)}: nothing to import (is it the "
            "database django-sequences used? --table names another table)."
        )
    qn = connection.ops.quote_name
    with connection.cursor() as cursor:
        columns = {c.name for c in connection.introspection.get_table_description(cursor, table)}
        absent = [c for c in ("name", "last") if c not in columns]
        if absent:
            raise SequenceError(
                f"The table {table!r} on {alias!r} has no column {absent[0]!r}: it is not "
                "django-sequences' table (name, last). Nothing was imported."
            )
        cursor.execute(f"SELECT {qn('name')}, {qn('last')} FROM {qn(table)} ORDER BY 1")
        rows = cursor.fetchall()
    refused = [problem for row in rows if (problem := _refusal(*row))]
    if refused:
        more = f" (and {len(refused) - 3} more)" if len(refused) > 3 else ""
        raise SequenceError(
            f"{len(refused)} row(s) of {table!r} cannot be carried over: "
            f"{'; '.join(refused[:3])}{more}. Nothing was imported."
        )
    for name, _last in rows:
        _refuse_daily(name, "django-sequences' value")
    return [Carried(name, last, continue_above(name, last, using=alias)) for name, last in rows]


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
