"""The findings in order-number columns: numbers from the future, values outside their
format, and positions issued twice (a stream's columns read as one sorted run)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import models

from ..core.check_digits import CHECK_DIGITS
from ..core.order_format import OrderNumberFormat
from ..exceptions import InvalidId
from ..inventory import field_label
from .findings import AuditRun, Finding
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


def _audit_stream(
    stream: str,
    fmt: OrderNumberFormat,
    members: list[Any],
    run: AuditRun,
) -> None:
    report, now, tolerance, batch_size, using = run
    labels = {id(each): field_label(each) for each in members}
    seq_factor = fmt.shard_count  # a number is (stem, sequence, shard) in this base
    stem_factor = (fmt.max_sequence + 1) * seq_factor
    max_sequence = fmt.max_sequence
    check_digit = CHECK_DIGITS[fmt.check_digit] if fmt.check_digit else None
    latest_second = fmt.local_second(now + tolerance)
    latest_text = (now + tolerance).isoformat()
    # Numbers come sorted: a stem is read (and its date checked) once per run of it.
    last_stem, last_second, last_error = -1, 0, ""
    counts = dict.fromkeys(labels, 0)
    previous: tuple[int, Any, Any] | None = None  # (position, field, pk)

    def outside(each: Any, pk: Any, value: int, why: str) -> None:
        report.add(
            Finding(
                "order_outside_format",
                labels[id(each)],
                str(pk),
                str(value),
                f"{why}: not a number of stream {stream!r} ({fmt.describe()})",
            )
        )

    for value, each, pk in merged_values(members, batch_size=batch_size, using=using):
        counts[id(each)] += 1
        if not 0 < value <= MAX_INT64:
            outside(each, pk, value, f"outside 1..{MAX_INT64}")
            continue
        body = value
        if check_digit is not None:
            body, digit = divmod(value, 10)
            if check_digit(body) != digit:
                outside(each, pk, value, "its check digit fails")
                continue
        stem, rest = divmod(body, stem_factor)
        sequence = rest // seq_factor
        if stem != last_stem:
            last_stem, last_error = stem, ""
            try:
                last_second = fmt.local_second_of_stem(stem)
            except InvalidId as exc:
                last_error = str(exc).split(":")[0]
        if last_error:
            outside(each, pk, value, last_error)
            continue
        if not 1 <= sequence <= max_sequence:
            outside(each, pk, value, f"sequence {sequence} outside 1..{max_sequence}")
            continue
        if last_second > latest_second:
            report.add(
                Finding(
                    "order_from_future",
                    labels[id(each)],
                    str(pk),
                    str(value),
                    f"second {stem:012d} ({fmt.zone}) is after {latest_text} (now + tolerance)",
                )
            )
        # Concealing permutes a second's sequences: a repeat shown is a repeat.

        position = body // seq_factor
        if previous is not None and previous[0] == position:
            other = f"{labels[id(previous[1])]} pk={previous[2]}"
            if fmt.conceal:
                sequence = fmt.true_sequence(last_second, sequence)
            report.add(
                Finding(
                    "order_position_repeated",
                    labels[id(each)],
                    str(pk),
                    str(value),
                    f"second {stem:012d}, sequence {sequence} of stream {stream!r} also "
                    f"issued to {other}",
                    other=other,
                )
            )
        previous = (position, each, pk)
    for each in members:
        report.count_rows(labels[id(each)], counts[id(each)])
