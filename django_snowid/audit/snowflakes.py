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
from ..workers.sources import LEASE_SOURCES
from .findings import AuditRun, GroupFindings
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


def _audit_layout(layout: Layout, members: list[Any], run: AuditRun) -> None:
    found = _LayoutFindings(layout, members, run)
    # No shard bits where the rows give none: the generator leaves them at 0.
    unsharded = {id(each) for each in members if each.shard_from is None}
    max_id, latest = layout.max_id, layout.max_id_at(run.now + run.tolerance)
    shard_bits, max_shard = layout.shard_bits, layout.max_shard
    leased_shift, leased_mask, leased_limit = _leased_bits(layout)
    boundaries = _legacy_boundaries(members, run.using)
    counts = dict.fromkeys(found.labels, 0)
    legacy = dict.fromkeys(boundaries, 0)
    # The row before, in the run sorted by value: (position, field, pk).
    last_position, last_field, last_pk = -1, None, None
    for value, each, pk in merged_values(members, batch_size=run.batch_size, using=run.using):
        key = id(each)
        counts[key] += 1
        if 0 <= value < boundaries.get(key, 0):
            legacy[key] += 1
            continue
        if value < 0 or value > max_id:
            found.out_of_range(each, pk, value)
            continue
        if value > latest:
            found.from_future(each, pk, value)
        if value & max_shard and key in unsharded:
            found.shard_set(each, pk, value)
        if leased_limit is not None and (value >> leased_shift) & leased_mask >= leased_limit:
            found.not_leased(each, pk, value, (value >> leased_shift) & leased_mask, leased_limit)
        position = value >> shard_bits
        if position == last_position:
            found.tick_reused(each, pk, value, found.row(last_field, last_pk))
        last_position, last_field, last_pk = position, each, pk
    found.count_rows(counts)
    found.note_legacy(legacy, boundaries)


def _leased_bits(layout: Layout) -> tuple[int, int, int | None]:
    """(shift, mask, limit) of the leased node part: its values from the limit on are
    never leased (limit ``None``: every value is)."""
    bits = layout.node_parts[-1].bits if layout.node_parts else 0
    return layout.node_shift, (1 << bits) - 1, _leased_limit(layout)


def _legacy_boundaries(members: list[Any], using: str | None) -> dict[int, int]:
    """Ids below the first Snowflake id of an adopted model's switch are its old ids."""
    return {
        id(each): legacy_boundary(each.model, using=using) or 0
        for each in members
        if each.primary_key
    }


class _LayoutFindings(GroupFindings):
    """The findings of one layout's columns, and why each is one."""

    def __init__(self, layout: Layout, members: list[Any], run: AuditRun) -> None:
        super().__init__(run.report, members)
        self.layout = layout
        self.latest_text = (run.now + run.tolerance).isoformat()

    def out_of_range(self, each: Any, pk: Any, value: int) -> None:
        layout = self.layout
        why = f"outside 0..{layout.max_id}, the ids of layout {layout.name!r} ({layout.describe()})"
        self.add("id_outside_layout", each, pk, value, why)

    def shard_set(self, each: Any, pk: Any, value: int) -> None:
        why = (
            f"shard bits {value & self.layout.max_shard} set, but the field has "
            "no shard_from: its ids end with shard 0"
        )
        self.add("id_outside_layout", each, pk, value, why)

    def not_leased(self, each: Any, pk: Any, value: int, worker: int, limit: int) -> None:
        why = (
            f"leased worker id {worker}, but "
            f"SNOWID_WORKER_POOL_SIZE={limit} leases only 0..{limit - 1}"
        )
        self.add("id_outside_layout", each, pk, value, why)

    def from_future(self, each: Any, pk: Any, value: int) -> None:
        made = self.layout.decode(value).time.isoformat()
        why = f"made at {made}, after {self.latest_text} (now + tolerance)"
        self.add("id_from_future", each, pk, value, why)

    def tick_reused(self, each: Any, pk: Any, value: int, other: str) -> None:
        decoded = self.layout.decode(value)
        why = (
            f"tick {decoded.tick} ({decoded.time.isoformat()}), node "
            f"{decoded.node} {decoded.parts}, sequence {decoded.sequence} also in "
            f"{other}: one worker id used twice in one tick"
        )
        self.add("worker_tick_reused", each, pk, value, why, other=other)

    def note_legacy(self, legacy: dict[int, int], boundaries: dict[int, int]) -> None:
        for key, boundary in boundaries.items():
            if legacy[key]:
                self.report.notes.append(
                    f"{self.labels[key]}: {legacy[key]} legacy ids (below {boundary}, "
                    "from before Snowflake ids were adopted): not checked."
                )
