"""The findings in Snowflake columns: ids from the future, ids outside their layout, and
one worker id used twice in one tick (a layout's columns read as one sorted run, shard
bits aside). Legacy ids are counted, not checked."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from django.db import models

from ..adopt.journal import legacy_boundary
from ..conf import conf
from ..core.layout import Layout
from ..workers.sources import LEASE_SOURCES
from .findings import AuditRun, GroupAudit
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
    audit = _LayoutAudit(layout, members, run)
    # No shard bits where the rows give none: the generator leaves them at 0.
    unsharded = {id(each) for each in members if each.shard_from is None}
    max_id, latest = layout.max_id, layout.max_id_at(run.now + run.tolerance)
    shard_bits, max_shard = layout.shard_bits, layout.max_shard
    leased_shift, leased_mask, leased_limit = _leased_bits(layout)
    rows = merged_values(members, batch_size=run.batch_size, using=run.using, read=audit.read)
    # The row before, in the run sorted by value: (position, field, pk).
    last_position, last_field, last_pk = -1, None, None
    for value, each, pk in rows:
        if value < 0 or value > max_id:
            audit.out_of_range(each, pk, value)
            continue
        if value > latest:
            audit.from_future(each, pk, value)
        if value & max_shard and id(each) in unsharded:
            audit.shard_set(each, pk, value)
        if leased_limit is not None and (value >> leased_shift) & leased_mask >= leased_limit:
            audit.not_leased(each, pk, value, (value >> leased_shift) & leased_mask, leased_limit)
        position = value >> shard_bits
        if position == last_position:
            audit.tick_reused(each, pk, value, audit.row(last_field, last_pk))
        last_position, last_field, last_pk = position, each, pk
    audit.count_rows()
    audit.note_legacy()


def _leased_bits(layout: Layout) -> tuple[int, int, int | None]:
    """(shift, mask, limit) of the leased node part; ``None``: no limit on its values."""
    bits = layout.node_parts[-1].bits if layout.node_parts else 0
    return layout.node_shift, (1 << bits) - 1, _leased_limit(layout)


class _LayoutAudit(GroupAudit):
    """One layout's audit: the legacy ids it leaves out, its findings and why each is one."""

    def __init__(self, layout: Layout, members: list[Any], run: AuditRun) -> None:
        super().__init__(run.report, members)
        self.layout = layout
        self.latest_text = (run.now + run.tolerance).isoformat()
        # Ids below the first Snowflake id of an adopted model's switch are its old ids.
        self.boundaries = {
            id(each): legacy_boundary(each.model, using=run.using) or 0
            for each in members
            if each.primary_key
        }
        self.legacy = dict.fromkeys(self.boundaries, 0)

    def read(self, field: Any, batch: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        """The rows of ``batch`` to check: all but the legacy ids (sorted: a slice)."""
        batch = super().read(field, batch)
        boundary = self.boundaries.get(id(field), 0)
        if not boundary or batch[0][0] >= boundary or batch[-1][0] < 0:
            return batch
        start = bisect_left(batch, 0, key=itemgetter(0))
        end = bisect_left(batch, boundary, key=itemgetter(0))
        self.legacy[id(field)] += end - start
        return batch[:start] + batch[end:]

    def note_legacy(self) -> None:
        for key, boundary in self.boundaries.items():
            if self.legacy[key]:
                self.report.notes.append(
                    f"{self.labels[key]}: {self.legacy[key]} legacy ids (below {boundary}, "
                    "from before Snowflake ids were adopted): not checked."
                )

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
