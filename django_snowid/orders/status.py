"""What the admin status page shows of each order-number stream: the store's position,
the largest number in the database and how many numbers a second the last minute saw."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Final

from .. import inventory
from ..conf import conf
from .issuer import block_sizes, fields_of_stream
from .recovery import database_position, databases_for
from .stores import get_store

__all__ = ["RATE_WINDOW_S", "numbers_since", "store_findings", "stream_rows"]

RATE_WINDOW_S: Final = 60


def numbers_since(fields: Sequence[Any], first: int) -> int:
    """How many numbers of ``fields`` are ``first`` or above, on every database that can
    hold their rows: one range count on each UNIQUE column (an index scan) and database."""
    return sum(
        field.model._base_manager.db_manager(db).filter(**{f"{field.attname}__gte": first}).count()
        for field in fields
        for db in databases_for(field.model)
    )


def _readable_second(local_second: int, fields: Sequence[Any]) -> str:
    """A store's "local second" as a person reads it: the UTC time it stands for, written
    out in UTC whatever the current time zone; the stream's wall clock when no installed
    field says which zone that clock is in."""
    if fields:
        moment = fields[0].format.time_of_local_second(local_second)
        return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    wall = datetime(1970, 1, 1) + timedelta(seconds=local_second)
    return wall.strftime("%Y-%m-%d %H:%M:%S (wall clock of an unknown zone)")


def stream_rows(now: float | None = None) -> list[dict[str, Any]]:
    """One row per stream the store holds, by name: its position in the store and, for a
    stream of installed fields, the last number issued in the database and the numbers a
    second over the last :data:`RATE_WINDOW_S` seconds (counted in the database, so the
    same for either store; numbers ahead of the clock count too), and the size of this
    process's next block of the stream (``None``: it issued none of it)."""
    store = get_store()
    sizes = block_sizes()
    now = time.time() if now is None else now
    rows = []
    for stream in sorted(store.streams()):
        position = store.read(stream)
        if position is None:
            continue
        fields = fields_of_stream(stream)
        row: dict[str, Any] = {
            "stream": stream,
            "second": position[0],
            "second_utc": _readable_second(position[0], fields),
            "sequence": position[1],
            "last_number": None,
            "rate_1min": None,
            "block_size": sizes.get(stream),
        }
        if fields:
            fmt = fields[0].format  # the fields of a stream share it (check E204)
            row["last_number"] = database_position(fields, fmt).last_number
            local_now = int(now) + fmt.utc_offset_at(now)
            # The smallest number the window's first second can have, whatever its shard
            # (and its shown sequence, when concealed).
            first = fmt.bounds_of_second(local_now - RATE_WINDOW_S + 1)[0]
            row["rate_1min"] = round(numbers_since(fields, first) / RATE_WINDOW_S, 2)
        rows.append(row)
    return rows


def store_findings() -> list[tuple[bool, str]]:
    """The store answers for every stream: (fatal, message) pairs for the health check."""
    streams = sorted({field.stream for field in inventory.order_fields()})
    try:
        store = get_store()
        for stream in streams:
            store.read(stream)
    except Exception as exc:
        return [
            (
                True,
                f"The order-number store (SNOWID_ORDER_BACKEND={conf.ORDER_BACKEND!r}) is "
                f"unreachable ({exc}): no order number of {', '.join(map(repr, streams))} "
                "can be issued. Bring it back; the streams recover from the database by "
                "themselves (manage.py snowid_recover does it at once).",
            )
        ]
    return []
