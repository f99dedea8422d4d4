"""The findings in the columns of named sequences: values above the sequence's mark.

A mark is the largest value its sequence may have issued; it only ever rises, and both
stores keep it in the database. A value above it was not issued by the sequence (or the
mark went back: a restore of an old backup), and the next values will repeat it. One
query per field (``column > mark``, on the column's index), not a scan.

A daily sequence has a mark per day, and its rows do not say their day: their values are
compared with the largest of its marks. Text fields (``SequenceTextField``) are not
read: their values are texts of a template.
"""

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
