"""Every column a switch converts: the model layer's holders of the key, the own keys of
their auto-created many-to-many tables, and the keys only the database knows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import models

from .catalog import references
from .relations import holders_of

__all__ = ["Held", "held_columns"]

THROUGH_KEY = "many-to-many's own key"
UNMODELLED = "foreign key (database only)"


@dataclass(frozen=True)
class Held:
    table: str
    column: str
    kind: str  # pk, foreign key, one-to-one, many-to-many, THROUGH_KEY, UNMODELLED
    label: str  # app_label.Model.field, or the constraint the database knows


def _modelled(model: type[models.Model]) -> list[Held]:
    found = []
    for holder in holders_of(model):
        label = f"{holder.model._meta.label}.{holder.field.name}"
        found.append(Held(holder.table, holder.column, holder.kind, label))
        meta = holder.model._meta
        if holder.kind == "many-to-many" and meta.auto_created and meta.pk is not None:
            own = Held(holder.table, meta.pk.column, THROUGH_KEY, f"{meta.label}.{meta.pk.name}")
            if own not in found:
                found.append(own)
    return found


def held_columns(connection: Any, model: type[models.Model]) -> list[Held]:
    """The columns of ``model``'s switch on ``connection``, its key first."""
    found = _modelled(model)
    known = {(h.table, h.column) for h in found}
    pointed = {(h.table, h.column) for h in found if h.kind != THROUGH_KEY}
    while True:
        new = [
            r
            for r in references(connection, {table for table, _ in pointed})
            if (r.target, r.target_column) in pointed and (r.table, r.column) not in known
        ]
        if not new:
            return found
        for ref in new:
            if (ref.table, ref.column) in known:
                continue  # two keys of one column
            known.add((ref.table, ref.column))
            pointed.add((ref.table, ref.column))
            found.append(Held(ref.table, ref.column, UNMODELLED, f"constraint {ref.constraint}"))
