"""Which worker ids a process may lease for a layout (its pool)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..conf import conf
from ..core.layout import Layout
from ..exceptions import WorkerIdError

__all__ = ["PoolSpec", "pool_for"]


@dataclass(frozen=True)
class PoolSpec:
    """The worker ids one process may lease for a layout: the last node part is leased,
    the other parts are fixed by ``SNOWID_WORKER_ID`` (e.g. the datacenter).

    A lease is of a node value, in a pool named after the bits the node occupies in an
    id (what makes two ids collide), never after the layout's name: layouts that put
    their node in the same bits (``classic`` and ``datacenter``) share one pool, so old
    and new processes of a deploy that changes the layout never hold the same node value.
    The pool's node values are ``first .. first + size - 1`` (the leased part is the
    last, lowest, part of the node).
    """

    name: str
    size: int
    layout: Layout
    fixed: tuple[tuple[str, int], ...]

    def node(self, worker: int) -> int:
        if not self.fixed and len(self.layout.node_parts) <= 1:
            return self.layout.node_value(worker) if self.layout.node_parts else 0
        leased = self.layout.node_parts[-1].name
        return self.layout.node_value({**dict(self.fixed), leased: worker})

    @property
    def first(self) -> int:
        return self.node(0)


def pool_for(layout: Layout, worker_setting: int | Mapping[str, int]) -> PoolSpec:
    parts = layout.node_parts
    if not parts:
        raise WorkerIdError(f"Layout {layout.name!r} has no node bits: nothing to lease.")
    fixed: dict[str, int] = {}
    if len(parts) > 1:
        if isinstance(worker_setting, Mapping):
            fixed = {p.name: worker_setting.get(p.name, 0) for p in parts[:-1]}
        else:
            split = layout.split_node(layout.node_value(worker_setting))
            fixed = {p.name: split[p.name] for p in parts[:-1]}
    size = 1 << parts[-1].bits
    if conf.WORKER_POOL_SIZE:
        size = min(size, int(conf.WORKER_POOL_SIZE))
    name = f"node-bits-{layout.sequence_bits}-{layout.node_bits}"
    return PoolSpec(name, size, layout, tuple(fixed.items()))
