"""What the audit reports: a :class:`Finding` per row that should not exist, gathered in
an :class:`AuditReport` that counts every finding but keeps only a sample of each kind
per field (bounded memory on a table that is wrong throughout)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, NamedTuple

from ..inventory import field_label

__all__ = ["KINDS", "AuditReport", "AuditRun", "Finding", "GroupAudit"]

#: Every kind of finding, with what it means (the docs page says what to do).
KINDS: Final[dict[str, str]] = {
    "id_from_future": "a Snowflake id whose time lies beyond now plus the tolerance",
    "id_outside_layout": "a Snowflake id its layout cannot hold (negative, too large, or "
    "with parts no worker of these settings can write)",
    "worker_tick_reused": "two Snowflake ids of one layout with the same tick, node and "
    "sequence: one worker id used twice in one tick",
    "order_from_future": "an order number whose second lies beyond now plus the tolerance",
    "order_outside_format": "a value its order-number format cannot hold",
    "order_position_repeated": "two order numbers of one stream at the same second and sequence",
    "sequence_above_mark": "a sequence value above the sequence's mark",
}


@dataclass(frozen=True)
class Finding:
    """One row that should not exist. ``value`` and ``pk`` are strings (JSON-safe);
    ``other`` names the row it repeats, for the findings of a repeat."""

    kind: str
    field: str
    pk: str
    value: str
    detail: str
    other: str = ""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    def line(self) -> str:
        return f"{self.kind}: {self.field} pk={self.pk} value={self.value}: {self.detail}"


@dataclass
class AuditReport:
    """Every finding counted; at most ``samples`` of each kind kept per field."""

    samples: int = 20
    findings: list[Finding] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    checked: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _kept: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)

    def add(self, finding: Finding) -> None:
        self.counts[finding.kind] = self.counts.get(finding.kind, 0) + 1
        key = (finding.kind, finding.field)
        kept = self._kept.get(key, 0)
        if kept < self.samples:
            self._kept[key] = kept + 1
            self.findings.append(finding)

    def count_more(self, kind: str, more: int) -> None:
        """Count ``more`` findings of ``kind`` that were not read one by one."""
        if more:
            self.counts[kind] = self.counts.get(kind, 0) + more

    def count_rows(self, label: str, rows: int) -> None:
        """``rows`` of field ``label`` were read."""
        self.checked.append(label)
        self.rows[label] = self.rows.get(label, 0) + rows

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def truncated(self) -> bool:
        return self.total > len(self.findings)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": not self.total,
            "fields": list(self.checked),
            "rows": dict(self.rows),
            "counts": dict(self.counts),
            "findings": [f.as_dict() for f in self.findings],
            "truncated": self.truncated,
            "notes": list(self.notes),
        }


class AuditRun(NamedTuple):
    """One audit's report and settings, as every part of it reads them."""

    report: AuditReport
    now: datetime
    tolerance: timedelta
    batch_size: int
    using: str | None


class GroupAudit:
    """Fields read as one sorted run: rows counted by batch, findings under each label."""

    def __init__(self, report: AuditReport, members: list[Any]) -> None:
        self.report = report
        self.labels = {id(each): field_label(each) for each in members}
        self.rows = dict.fromkeys(self.labels, 0)

    def read(self, field: Any, batch: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        self.rows[id(field)] += len(batch)
        return batch

    def add(self, kind: str, each: Any, pk: Any, value: int, detail: str, other: str = "") -> None:
        self.report.add(Finding(kind, self.labels[id(each)], str(pk), str(value), detail, other))

    def row(self, each: Any, pk: Any) -> str:
        return f"{self.labels[id(each)]} pk={pk}"

    def count_rows(self) -> None:
        for key, label in self.labels.items():
            self.report.count_rows(label, self.rows[key])
