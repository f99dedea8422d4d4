"""Where this process's worker id comes from (``SNOWID_WORKER_ID_SOURCE``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import get_args

from ..conf import WorkerIdSource, conf
from ..core.digits import parse_digits
from ..core.layout import Layout
from ..exceptions import InvalidId, WorkerIdError
from ..settings_layouts import DEFAULT, build_layout

__all__ = [
    "LEASE_SOURCES",
    "SOURCES",
    "WorkerId",
    "parse_worker_id",
    "resolve_worker_id",
    "worker_for",
    "worker_node",
]

#: The worker-id sources (``conf.WorkerIdSource``), and those that lease.
SOURCES: tuple[WorkerIdSource, ...] = get_args(WorkerIdSource)
LEASE_SOURCES: tuple[WorkerIdSource, ...] = ("slot", "redis", "database")

WorkerId = int | Mapping[str, int]


def parse_worker_id(text: str, *, origin: str) -> WorkerId:
    """Parse ``"7"`` or ``"datacenter=1,machine=3"``."""
    text = text.strip()
    try:
        if "=" not in text:
            return parse_digits(text, what="a worker id")
        parts: dict[str, int] = {}
        for item in text.split(","):
            name, sep, value = item.partition("=")
            if not sep or not name.strip():
                raise InvalidId(f"{item!r} is not name=value")
            parts[name.strip()] = parse_digits(value.strip(), what="a worker id")
        return parts
    except InvalidId:
        raise WorkerIdError(
            f"{origin} is {text!r}: expected a non-negative integer such as '7' or "
            "named parts such as 'datacenter=1,machine=3'."
        ) from None


def resolve_worker_id() -> WorkerId:
    """The worker id the settings give this process (not yet checked against a layout)."""
    source = conf.WORKER_ID_SOURCE
    if source in ("static", *LEASE_SOURCES):
        # For leases: the fixed node parts (e.g. the datacenter); the last part is leased.
        return conf.WORKER_ID
    if source == "env":
        name = conf.WORKER_ID_ENV
        raw = os.environ.get(name)
        if raw is None:
            raise WorkerIdError(
                f"SNOWID_WORKER_ID_SOURCE is 'env' but the environment variable {name} is not set."
            )
        return parse_worker_id(raw, origin=f"The environment variable {name}")
    raise WorkerIdError(f"SNOWID_WORKER_ID_SOURCE is {source!r}; expected one of {list(SOURCES)}.")


def worker_for(layout: Layout, worker: WorkerId) -> WorkerId:
    """``worker`` as ``layout`` reads it: named parts apply to layouts with those part
    names; for another layout they are the integer they make in the default layout."""
    if isinstance(worker, Mapping) and set(worker) != {p.name for p in layout.node_parts}:
        return build_layout(DEFAULT).node_value(worker)
    return worker


def worker_node(layout: Layout, worker: WorkerId) -> int:
    """The node value of ``worker`` in ``layout`` (see :func:`worker_for`)."""
    return layout.node_value(worker_for(layout, worker))
