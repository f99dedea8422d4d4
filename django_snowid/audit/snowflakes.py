"""The findings in Snowflake columns: ids from the future, ids outside their layout, and
one worker id used twice in one tick (a layout's columns read as one sorted run, shard
bits aside). Legacy ids are counted, not checked."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import models

from ..adopt.journal import legacy_boundary
from ..conf import conf
from ..core.layout import Layout
from ..inventory import field_label
from ..workers.sources import LEASE_SOURCES
from .findings import AuditRun, Finding
from .scan import merged_values

__all__ = ["audit_snowflakes"]


def _by_layout(fields: Iterable[Any]) -> dict[str, tuple[Layout, list[Any]]]:
    groups: dict[str, tuple[Layout, list[Any]]] = {}
    for each in fields:
        layout = each.layout
        groups.setdefault(layout.name, (layout, []))[1].append(each)
    return groups


def _leased_limit(layout: Layout) -> int | None:
    """How many values the leased node part can take, when a pool size limits it."""

    if conf.WORKER_ID_SOURCE not in LEASE_SOURCES or not conf.WORKER_POOL_SIZE:
        return None
    if not layout.node_parts:
        return None
    size = int(conf.WORKER_POOL_SIZE)
    return size if size <= layout.node_parts[-1].max_value else None


def audit_snowflakes(fields: Iterable[models.Field], run: AuditRun) -> None:
    for layout, members in _by_layout(fields).values():
        _audit_layout(layout, members, run)


def _audit_layout(
    layout: Layout,
    members: list[Any],
    run: AuditRun,
) -> None:
    report, now, tolerance, batch_size, using = run
    labels = {id(each): field_label(each) for each in members}
    # No shard bits where the rows give none: the generator leaves them at 0.
    unsharded = {id(each) for each in members if each.shard_from is None}
    max_id = layout.max_id
    latest = layout.max_id_at(now + tolerance)
    latest_text = (now + tolerance).isoformat()
    shard_bits, max_shard = layout.shard_bits, layout.max_shard
    leased_bits = layout.node_parts[-1].bits if layout.node_parts else 0
    leased_shift = layout.node_shift
    leased_mask = (1 << leased_bits) - 1
    leased_limit = _leased_limit(layout)

    def outside(each: Any, pk: Any, value: int, why: str) -> None:
        report.add(Finding("id_outside_layout", labels[id(each)], str(pk), str(value), why))

    counts = dict.fromkeys(labels, 0)
    # Ids below the first Snowflake id of an adopted model's switch are its old ids.
    boundaries = {
        id(each): legacy_boundary(each.model, using=using) or 0
        for each in members
        if each.primary_key
    }
    legacy = dict.fromkeys(boundaries, 0)
    # The row before, in the run sorted by value: (position, field, pk).
    last_position, last_field, last_pk = -1, None, None
    for value, each, pk in merged_values(members, batch_size=batch_size, using=using):
        counts[id(each)] += 1
        if 0 <= value < boundaries.get(id(each), 0):
            legacy[id(each)] += 1
            continue
        if value < 0 or value > max_id:
            outside(
                each,
                pk,
                value,
                f"outside 0..{max_id}, the ids of layout {layout.name!r} ({layout.describe()})",
            )
            continue
        if value > latest:
            made = layout.decode(value).time.isoformat()
            report.add(
                Finding(
                    "id_from_future",
                    labels[id(each)],
                    str(pk),
                    str(value),
                    f"made at {made}, after {latest_text} (now + tolerance)",
                )
            )
        if value & max_shard and id(each) in unsharded:
            outside(
                each,
                pk,
                value,
                f"shard bits {value & max_shard} set, but the field has "
                "no shard_from: its ids end with shard 0",
            )
        if leased_limit is not None and (value >> leased_shift) & leased_mask >= leased_limit:
            worker = (value >> leased_shift) & leased_mask
            outside(
                each,
                pk,
                value,
                f"leased worker id {worker}, but "
                f"SNOWID_WORKER_POOL_SIZE={leased_limit} leases only 0..{leased_limit - 1}",
            )
        position = value >> shard_bits
        if position == last_position:
            decoded = layout.decode(value)
            other = f"{labels[id(last_field)]} pk={last_pk}"
            report.add(
                Finding(
                    "worker_tick_reused",
                    labels[id(each)],
                    str(pk),
                    str(value),
                    f"tick {decoded.tick} ({decoded.time.isoformat()}), node "
                    f"{decoded.node} {decoded.parts}, sequence {decoded.sequence} also in "
                    f"{other}: one worker id used twice in one tick",
                    other=other,
                )
            )
        last_position, last_field, last_pk = position, each, pk
    for each in members:
        report.count_rows(labels[id(each)], counts[id(each)])
        if legacy.get(id(each)):
            report.notes.append(
                f"{labels[id(each)]}: {legacy[id(each)]} legacy ids (below "
                f"{boundaries[id(each)]}, from before Snowflake ids were adopted): not checked."
            )
