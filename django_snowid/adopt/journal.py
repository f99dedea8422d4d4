"""The adoption journal (:class:`~django_snowid.models.IdAdoption`): where a switch stands,
and the legacy-id boundary of every adopted model, read once a process and database."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from django.db import DatabaseError, connections, router

__all__ = ["forget", "legacy_boundaries", "legacy_boundary", "record_done"]

_boundaries: dict[str, dict[str, int]] = {}


def forget() -> None:
    """Read the journal again at the next question (after a switch in this process)."""
    _boundaries.clear()


def legacy_boundaries(using: str) -> dict[str, int]:
    """``{"app_label.Model": first Snowflake id}`` of the models adopted on ``using``."""
    known = _boundaries.get(using)
    if known is None:
        from ..models import IdAdoption  # the models import the fields, which import us

        connection = connections[using]
        try:
            if IdAdoption._meta.db_table not in connection.introspection.table_names():
                known = {}  # not migrated yet: nothing adopted
            else:
                rows = IdAdoption.objects.using(using).exclude(state="undone")
                known = dict(rows.values_list("label", "first_id"))
        except DatabaseError:
            return {}  # not cached: asked again once the database answers
        _boundaries[using] = known
    return known


def legacy_boundary(model: type, *, using: str | None = None) -> int | None:
    """The first Snowflake id of ``model``'s switch, or ``None`` if it was never adopted."""

    alias = using or router.db_for_read(model)
    return legacy_boundaries(alias).get(model._meta.label)  # type: ignore[attr-defined]


def record_done(
    using: str,
    *,
    label: str,
    table: str,
    column: str,
    first_id: int,
    old_max: int | None,
    started: datetime,
) -> Any:
    """Mark ``label`` adopted; a switch ``snowid_adopt`` runs keeps the boundary it started
    with and stays running (the run marks it done once its migration is recorded)."""
    from ..models import IdAdoption

    row = IdAdoption.objects.using(using).filter(label=label).first()
    if row is None or row.state == "undone":
        row = row or IdAdoption(label=label)
        row.first_id, row.old_max, row.started_at = first_id, old_max, started
    row.table, row.column = table, column
    row.state = "running" if row.state == "running" else "done"
    row.finished_at = datetime.now(timezone.utc)
    row.save(using=using)
    forget()
    return row
