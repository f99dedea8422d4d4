"""What ``manage.py snowid_sequences`` and the admin status page show, and the raising
both share with the ``--serve`` loop."""

from __future__ import annotations

import time
from typing import Any

from django.db import router

from ..conf import conf
from ..core.sequence_plan import Rates, check_name, needs_raise, plan_step
from ..db.errors import is_missing_table
from ..db.tables import missing_message
from ..exceptions import SequenceError
from .spec import SequenceSpec, build_spec
from .stores import get_store
from .stores.database import read_marks

__all__ = ["raise_by", "raise_if_low", "sequence_rows", "store_findings"]


def _spec(stored: str) -> SequenceSpec:
    name = stored.split(":", 1)[0]
    declared = conf.SEQUENCES
    if name not in declared:
        try:
            check_name(name)
        except ValueError:  # a name only the compat module takes (django-sequences' names)
            return SequenceSpec(name)
    return build_spec(name, declared.get(name, {}))


def _row(store: Any, stored: str, mark: int, now: float) -> dict[str, Any]:
    spec = _spec(stored)
    row: dict[str, Any] = {"name": spec.name, "stored": stored, "kind": spec.kind, "mark": mark}
    if not store.raises_ahead:
        # The database store issues the mark itself: it is the last value.
        return {**row, "current": mark, "published": None, "headroom": None}
    state = store.state(stored)
    rates = store.rates(state)
    rate = rates.estimate(int(now))
    # How long the headroom lasts at the sustained rate, not at the last second's: a burst
    # that filled one second would otherwise cut the figure 300-fold the second after it
    # and restore it the second after that, with nothing drawn. (Raising still reacts to
    # the peak: ``low`` and ``next_step`` use the estimate.)
    sustained = rates.average_rate(int(now))
    headroom = state["max"] - state["cur"] if "max" in state else None
    return {
        **row,
        "current": state.get("cur"),
        "published": state.get("max"),
        "headroom": headroom,
        "minutes_left": (
            round(headroom / sustained / 60, 1) if headroom is not None and sustained > 0 else None
        ),
        "rate_last_s": rates.last_second_rate(int(now)),
        "rate_5min": round(sustained, 3),
        "last_step": state.get("step"),
        "next_step": plan_step(rate, min_step=spec.min_step, max_step=spec.max_step),
        "low": headroom is not None and needs_raise(headroom, rate),
    }


def sequence_rows(using: str | None = None) -> list[dict[str, Any]]:
    """One row per stored sequence (a daily sequence has one per day), by name."""
    store = get_store()
    now = store.clock()
    return [_row(store, s, m, now) for s, m in sorted(read_marks(using).items())]


def raise_by(stored: str, by: int, using: str | None = None) -> int:
    """Raise a Redis sequence's mark by ``by`` now (ahead of a known peak); the new mark."""
    store = get_store()
    if not store.raises_ahead:
        raise SequenceError(
            "SNOWID_SEQUENCE_BACKEND is 'database': it issues values from the mark itself, "
            "there is no mark to raise ahead."
        )
    spec = _spec(stored)
    for _ in range(2000):
        state = store.state(stored)
        if state.get("max", 0) + by > 2**63 - 1:
            raise SequenceError(
                f"Raising the mark of {stored!r} ({state.get('max', 0)}) by {by} would pass "
                "2**63 - 1, the largest value a sequence can hold."
            )
        if store.raise_mark(spec, stored, using, rates=Rates(), floor=state.get("max", 0), by=by):
            return store.state(stored)["max"]
        time.sleep(0.005)  # another client holds the lock: let it finish
    raise SequenceError(f"The raise lock of {stored!r} stayed taken for 10 seconds.")


def raise_if_low(using: str | None = None) -> list[str]:
    """Raise every Redis sequence whose headroom is low (the ``--serve`` loop); the names."""
    store = get_store()
    raised = []
    for row in sequence_rows(using):
        if row.get("low") and store.raises_ahead:
            state = store.state(row["stored"])
            rates = store.rates(state)
            spec = _spec(row["stored"])
            if store.raise_mark(spec, row["stored"], using, rates=rates, floor=state["max"]):
                raised.append(row["stored"])
    return raised


def store_findings() -> list[tuple[bool, str]]:
    """The marks' database, django-sequences' import, and the headroom of a store that
    raises ahead: (fatal, message) pairs for the health check."""
    from .models import SequenceMark

    alias = router.db_for_write(SequenceMark)
    unreachable = _marks_unreadable(alias, SequenceMark._meta.db_table)
    if unreachable:
        return [unreachable]
    findings = _changed_since_import(alias)
    store = get_store()
    if not store.raises_ahead:
        return findings  # the database store issues the mark itself: it cannot lag
    try:
        rows = sequence_rows()
        if not rows:
            store.state("health")  # still ask the server: one read
    except Exception as exc:
        return [*findings, _store_unreachable(exc)]
    return [*findings, *_marks_lagging(rows)]


def _marks_unreadable(alias: str, table: str) -> tuple[bool, str] | None:
    try:
        read_marks()  # the database of the marks answers
    except Exception as exc:
        if is_missing_table(exc):
            return True, missing_message(table, alias, "no sequence value is issued")
        return (
            True,
            f"The database of the sequence marks is unreachable ({exc}): no sequence "
            "value can be issued (nor a Redis sequence's mark raised). Bring it back.",
        )
    return None


def _changed_since_import(alias: str) -> list[tuple[bool, str]]:
    from .from_django_sequences import changes_since_import

    return [
        (
            True,
            f"django-sequences' table {table} changed after its import: old code is still "
            f"drawing from django-sequences, and issues values that ours issue too. {what}. "
            "Stop it, then run `manage.py snowid_sequences --import-django-sequences` again.",
        )
        for table, what in changes_since_import(alias)
    ]


def _store_unreachable(exc: Exception) -> tuple[bool, str]:
    return (
        True,
        f"The sequence store (SNOWID_SEQUENCE_BACKEND={conf.SEQUENCE_BACKEND!r}) "
        f"is unreachable ({exc}): no sequence value can be issued. Bring it back; "
        "sequences resume above their database marks by themselves.",
    )


def _marks_lagging(rows: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    # At the sustained (five-minute) rate: one busy second marks a sequence low for the
    # raising (``row["low"]``), which is no reason to wake an operator.
    low = [
        row
        for row in rows
        if row["headroom"] is not None and needs_raise(row["headroom"], row["rate_5min"])
    ]
    if not low:
        return []
    named = ", ".join(
        f"{row['stored']!r} ({row['headroom']} values left at {row['rate_5min']}/s over 5 min, "
        f"{row['rate_last_s']} in the last second)"
        for row in low[:5]
    )
    return [
        (
            False,
            f"The database mark of {len(low)} sequence(s) lags their rate: {named}. Callers "
            "raise it themselves, one database write in their request each time. Raise a "
            "declaration's max_step, run `manage.py snowid_sequences --serve`, or raise it "
            "ahead of a known peak with `manage.py snowid_sequences --raise NAME --by N`.",
        ),
    ]
