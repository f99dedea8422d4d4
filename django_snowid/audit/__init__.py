"""``manage.py snowid_audit``: read the columns of our fields and report what should never
happen; the checks receive the fields and the moment they take as "now"."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.apps import apps

from .. import inventory
from .findings import KINDS, AuditReport, AuditRun, Finding
from .orders import audit_orders
from .snowflakes import audit_snowflakes

__all__ = ["KINDS", "AuditReport", "Finding", "run_audit"]


def run_audit(
    *labels: str,
    now: datetime,
    tolerance: timedelta = timedelta(seconds=60),
    batch_size: int = 10_000,
    samples: int = 20,
    using: str | None = None,
) -> AuditReport:
    """Audit the fields of the installed models (of the app or model ``labels``, if
    given) as of ``now``; ``using`` reads one database instead of each model's."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, not {batch_size!r}.")
    report = AuditReport(samples=samples)
    run = AuditRun(report, now, tolerance, batch_size, using)
    audit_snowflakes(inventory.fields("snowflake", *labels), run)
    audit_orders(inventory.fields("order", *labels), run)
    sequence_fields = inventory.fields("sequence", *labels)
    if sequence_fields and apps.is_installed("django_snowid.sequences"):
        from .sequences import audit_sequences  # the marks' table is that app's

        audit_sequences(sequence_fields, report, samples=samples, using=using)
    elif sequence_fields:
        report.notes.append(
            "Sequence fields not checked: django_snowid.sequences, whose table holds their "
            "marks, is not in INSTALLED_APPS."
        )
    return report
