"""The findings in the columns of named sequences: values above the sequence's mark (a
daily sequence's largest), one indexed query per field; text fields are not read."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import models, router

from ..inventory import field_label
from .findings import AuditReport, Finding

__all__ = ["audit_sequences"]


def _mark(marks: dict[str, int], name: str) -> int | None:
    found = [value for stored, value in marks.items() if stored.split(":", 1)[0] == name]
    return max(found) if found else None


def audit_sequences(
    fields: Iterable[models.Field],
    report: AuditReport,
    *,
    samples: int,
    using: str | None = None,
) -> None:
    # An app of its own: imported only when its fields are installed.
    from ..sequences.models import SequenceMark
    from ..sequences.stores.database import read_marks

    marks = read_marks(using or router.db_for_read(SequenceMark))
    for each in fields:
        label = field_label(each)
        if not isinstance(each, models.IntegerField):
            report.notes.append(f"{label}: a text of a template, not read.")
            continue
        name: str = getattr(each, "sequence")  # noqa: B009 (a field of ours: it names one)
        mark = _mark(marks, name)
        rows: Any = each.model._base_manager.db_manager(using or router.db_for_read(each.model))
        above = rows.filter(**{f"{each.attname}__gt": mark or 0})
        found = above.count()
        report.checked.append(label)
        for value, pk in above.order_by(each.attname).values_list(each.attname, "pk")[:samples]:
            report.add(
                Finding(
                    "sequence_above_mark",
                    label,
                    str(pk),
                    str(value),
                    f"above the mark {mark} of sequence {name!r}"
                    if mark is not None
                    else f"sequence {name!r} has no mark: it never issued a value",
                )
            )
        report.count_more("sequence_above_mark", found - min(found, samples))
