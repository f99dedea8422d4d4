"""Carrying a plan out: the journal row, the migration files, then the online steps
(PostgreSQL) or the plain migration (every backend), then the record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone

from django.core.management import call_command
from django.db import connections, transaction

from ..exceptions import AdoptionError
from ..models import IdAdoption
from .facts import read_facts
from .journal import forget
from .migration import record_applied, remove_unapplied, write_migrations
from .online import Online
from .plan import Plan, build_plan
from .recorder import widen_recorder

__all__ = ["adopted", "current_plan", "execute", "undo"]

Out = Callable[[str], None]


def _running(label: str, using: str) -> IdAdoption | None:
    return IdAdoption.objects.using(using).filter(label=label, state="running").first()


def current_plan(
    label: str, *, using: str, plain: bool = False, keep_sequence: bool = False, batch_size: int
) -> tuple[Plan, bool]:
    """The plan of ``label``: the one a stopped run started (and ``True``), or a new one."""
    journal = _running(label, using) if _journal_exists(using) else None
    if journal is not None:
        return Plan.from_dict(journal.plan), True
    facts, _ = read_facts(label, using=using)
    plan = build_plan(facts, online=not plain, batch_size=batch_size)
    if keep_sequence:
        kept = [s for s in plan.steps if s.action != "drop_identity"]
        plan.steps = [replace(step, number=n) for n, step in enumerate(kept, 1)]
    return plan, False


def adopted(label: str, *, using: str) -> bool:
    """Whether the journal holds ``label``'s switch as done."""
    if not _journal_exists(using):
        return False
    return IdAdoption.objects.using(using).filter(label__iexact=label, state="done").exists()


def _journal_exists(using: str) -> bool:
    return IdAdoption._meta.db_table in connections[using].introspection.table_names()


def _start(plan: Plan, using: str) -> IdAdoption:
    facts = plan.facts
    journal = IdAdoption.objects.using(using).filter(label=facts.label).first() or IdAdoption(
        label=facts.label
    )
    journal.table, journal.column = facts.table, facts.column
    journal.first_id, journal.old_max = facts.first_id, facts.old_max
    journal.state, journal.step, journal.progress = "running", 0, {}
    journal.plan = plan.as_dict()
    journal.started_at, journal.finished_at = datetime.now(timezone.utc), None
    journal.save(using=using)
    return journal


def _write(label: str, plan: Plan, journal: IdAdoption, using: str, out: Out) -> None:
    """Step 1: the migration files (a half-written one goes first)."""
    remove_unapplied(plan.facts.migrations, using=using)
    _, changes = read_facts(label, using=using)
    write_migrations(changes, plan.facts.migrations, using=using)
    out(f"step 1/{len(plan.steps)}: {plan.steps[0].what}")
    journal.step = 1
    journal.save(using=using, update_fields=["step"])


def execute(
    label: str,
    plan: Plan,
    *,
    using: str,
    batch_size: int,
    throttle: float,
    lock_timeout_ms: int,
    out: Out,
    progress: Callable[[str, int, int], None] | None = None,
) -> None:
    facts = plan.facts
    if facts.refusals:
        raise AdoptionError(" ".join(facts.refusals))
    journal = _running(label, using) or _start(plan, using)
    if journal.step < 1:
        _write(label, plan, journal, using, out)
    if plan.online:
        online = Online(plan, journal, using=using, batch_size=batch_size, throttle=throttle)
        online.lock_timeout_ms, online.out, online.progress = lock_timeout_ms, out, progress
        online.run(journal.step)
        widen_recorder(using)  # its rows take Snowflake ids
        with transaction.atomic(using=using):
            record_applied(facts.migrations, using=using)
            _finish(journal, using)
    else:
        out(f"step 2/{len(plan.steps)}: migrate ({', '.join(facts.migrations)})")
        for full in facts.migrations:
            app_label, name = full.split(".", 1)
            call_command("migrate", app_label, name, database=using, verbosity=0, interactive=False)
        _finish(journal, using)
    forget()
    out(f"{facts.label}: done; ids below {facts.first_id} are legacy ids.")


def _finish(journal: IdAdoption, using: str) -> None:
    journal.refresh_from_db(using=using)
    journal.state, journal.step = "done", len(journal.plan.get("steps", []))
    journal.finished_at = datetime.now(timezone.utc)
    journal.save(using=using)


def undo(label: str, *, using: str, out: Out, lock_timeout_ms: int = 500) -> None:
    journal = _running(label, using)
    if journal is None:
        raise AdoptionError(f"{label}: no switch is under way to undo.")
    plan = Plan.from_dict(journal.plan)
    if plan.online:
        Online(plan, journal, using=using, out=out, lock_timeout_ms=lock_timeout_ms).undo()
    removed = remove_unapplied(plan.facts.migrations, using=using)
    journal.state = "undone"
    journal.save(using=using, update_fields=["state"])
    forget()
    out(f"{label}: undone" + (f"; removed {', '.join(removed)}" if removed else ""))
