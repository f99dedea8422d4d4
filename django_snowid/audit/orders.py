"""The findings in order-number columns: numbers from the future, values outside their
format, and positions issued twice (a stream's columns read as one sorted run)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import models

from ..core.check_digits import CHECK_DIGITS
from ..core.order_format import OrderNumberFormat
from ..exceptions import InvalidId
from .findings import AuditRun, GroupAudit
from .scan import merged_values

__all__ = ["audit_orders"]

MAX_INT64 = 2**63 - 1


def _by_stream(fields: Iterable[Any]) -> dict[tuple[str, str], tuple[OrderNumberFormat, list]]:
    """The fields of each stream (and format: only numbers of one format sort together)."""
    groups: dict[tuple[str, str], tuple[OrderNumberFormat, list]] = {}
    for each in fields:
        fmt = each.format
        groups.setdefault((each.stream, fmt.describe()), (fmt, []))[1].append(each)
    return groups


def audit_orders(fields: Iterable[models.Field], run: AuditRun) -> None:
    for (stream, _), (fmt, members) in _by_stream(fields).items():
        _audit_stream(stream, fmt, members, run)


def _audit_stream(stream: str, fmt: OrderNumberFormat, members: list[Any], run: AuditRun) -> None:
    audit = _StreamAudit(stream, fmt, members, run)
    seq_factor = fmt.shard_count  # a number is (stem, sequence, shard) in this base
    stem_factor = (fmt.max_sequence + 1) * seq_factor
    max_sequence = fmt.max_sequence
    check_digit = CHECK_DIGITS[fmt.check_digit] if fmt.check_digit else None
    latest_second = fmt.local_second(run.now + run.tolerance)
    # Numbers come sorted: a stem is read (and its date checked) once per run of it.
    last_stem, last_second, last_error = -1, 0, ""
    previous: tuple[int, Any, Any] | None = None  # (position, field, pk)
    rows = merged_values(members, batch_size=run.batch_size, using=run.using, read=audit.read)
    for value, each, pk in rows:
        if not 0 < value <= MAX_INT64:
            audit.outside(each, pk, value, f"outside 1..{MAX_INT64}")
            continue
        body = value
        if check_digit is not None:
            body, digit = divmod(value, 10)
            if check_digit(body) != digit:
                audit.outside(each, pk, value, "its check digit fails")
                continue
        stem, rest = divmod(body, stem_factor)
        sequence = rest // seq_factor
        if stem != last_stem:
            last_stem, (last_second, last_error) = stem, _second_of_stem(fmt, stem)
        if last_error:
            audit.outside(each, pk, value, last_error)
            continue
        if not 1 <= sequence <= max_sequence:
            audit.outside(each, pk, value, f"sequence {sequence} outside 1..{max_sequence}")
            continue
        if last_second > latest_second:
            audit.from_future(each, pk, value, stem)
        position = body // seq_factor
        if previous is not None and previous[0] == position:
            other = audit.row(previous[1], previous[2])
            audit.repeated(each, pk, value, other, stem=stem, second=last_second, seq=sequence)
        previous = (position, each, pk)
    audit.count_rows()


def _second_of_stem(fmt: OrderNumberFormat, stem: int) -> tuple[int, str]:
    """(the second, ``""``) of a stem, or (0, why it is no second of ``fmt``)."""
    try:
        return fmt.local_second_of_stem(stem), ""
    except InvalidId as exc:
        return 0, str(exc).split(":")[0]


class _StreamAudit(GroupAudit):
    """The audit of one stream's columns: its findings, and why each is one."""

    def __init__(
        self, stream: str, fmt: OrderNumberFormat, members: list[Any], run: AuditRun
    ) -> None:
        super().__init__(run.report, members)
        self.stream, self.fmt = stream, fmt
        self.latest_text = (run.now + run.tolerance).isoformat()

    def outside(self, each: Any, pk: Any, value: int, why: str) -> None:
        why = f"{why}: not a number of stream {self.stream!r} ({self.fmt.describe()})"
        self.add("order_outside_format", each, pk, value, why)

    def from_future(self, each: Any, pk: Any, value: int, stem: int) -> None:
        why = f"second {stem:012d} ({self.fmt.zone}) is after {self.latest_text} (now + tolerance)"
        self.add("order_from_future", each, pk, value, why)

    def repeated(
        self, each: Any, pk: Any, value: int, other: str, *, stem: int, second: int, seq: int
    ) -> None:
        # Concealing permutes a second's sequences: a repeat shown is a repeat.
        sequence = self.fmt.true_sequence(second, seq) if self.fmt.conceal else seq
        why = (
            f"second {stem:012d}, sequence {sequence} of stream {self.stream!r} also "
            f"issued to {other}"
        )
        self.add("order_position_repeated", each, pk, value, why, other=other)
