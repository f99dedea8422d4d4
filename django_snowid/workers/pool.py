"""Which worker ids a process may lease for a layout (its pool)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .. import inventory
from ..conf import conf
from ..core.layout import Layout
from ..exceptions import LayoutError, WorkerIdError

__all__ = ["PoolSpec", "pool_for", "pool_name", "reserved_for_databases"]


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

    ``reserved``: the top values of the leased part that databases issue ids from
    (``database_ids=True``, ``SNOWID_DATABASE_NODES``); ``size`` never reaches them, so
    no process is ever handed one, whatever store it leases from.
    """

    name: str
    size: int
    layout: Layout
    fixed: tuple[tuple[str, int], ...]
    reserved: int = 0

    def node(self, worker: int) -> int:
        if not self.fixed and len(self.layout.node_parts) <= 1:
            return self.layout.node_value(worker) if self.layout.node_parts else 0
        leased = self.layout.node_parts[-1].name
        return self.layout.node_value({**dict(self.fixed), leased: worker})

    @property
    def first(self) -> int:
        return self.node(0)

    @property
    def capacity(self) -> int:
        """The values of the leased part: processes' and databases' together."""
        return 1 << self.layout.node_parts[-1].bits if self.layout.node_parts else 1

    def database_node(self, index: int) -> int:
        """The node value of the ``index``-th database (0: the top value of the pool)."""
        if not 0 <= index < self.reserved:
            raise WorkerIdError(
                f"Database number {index + 1} has no node value of pool {self.name!r}: "
                f"SNOWID_DATABASE_NODES reserves {self.reserved}."
            )
        return self.node(self.capacity - 1 - index)

    def database_nodes(self) -> list[int]:
        return [self.database_node(index) for index in range(self.reserved)]


def pool_name(layout: Layout) -> str:
    """The pool of a layout: named after the bits its node values occupy in an id."""
    return f"node-bits-{layout.sequence_bits}-{layout.node_bits}"


def reserved_for_databases(layout: Layout) -> int:
    """How many top node values of ``layout``'s pool databases issue ids from: the
    ``SNOWID_DATABASE_NODES`` setting when a field with ``database_ids=True`` has a
    layout of this pool, 0 otherwise."""
    name = pool_name(layout)
    for field in inventory.fields("snowflake"):
        if not getattr(field, "database_ids", False):
            continue
        try:
            if pool_name(field.layout) == name:  # type: ignore[attr-defined]
                return int(conf.DATABASE_NODES)
        except LayoutError:
            continue  # E003/E101 say why
    return 0


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
    reserved = reserved_for_databases(layout)
    size = (1 << parts[-1].bits) - reserved
    if size < 1:
        raise WorkerIdError(
            f"SNOWID_DATABASE_NODES={reserved} leaves no worker id of layout {layout.name!r} "
            f"({parts[-1].bits} bits in its last node part) to processes."
        )
    if conf.WORKER_POOL_SIZE:
        size = min(size, int(conf.WORKER_POOL_SIZE))
    return PoolSpec(pool_name(layout), size, layout, tuple(fixed.items()), reserved)
