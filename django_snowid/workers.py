"""Where this process's worker id comes from (``SNOWID_WORKER_ID_SOURCE``)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from .conf import conf
from .exceptions import WorkerIdError

#: The worker-id sources: a fixed number, an environment variable, or a lease (a lock
#: file on this host, a lease in Redis or in the database).
SOURCES = ("static", "env", "slot", "redis", "database")

WorkerId = int | Mapping[str, int]


def parse_worker_id(text: str, *, origin: str) -> WorkerId:
    """Parse ``"7"`` or ``"datacenter=1,machine=3"``."""
    text = text.strip()
    if text.isascii() and text.isdigit():
        return int(text)
    parts: dict[str, int] = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        value = value.strip()
        if not sep or not name.strip() or not (value.isascii() and value.isdigit()):
            raise WorkerIdError(
                f"{origin} is {text!r}: expected a non-negative integer such as '7' or "
                "named parts such as 'datacenter=1,machine=3'."
            )
        parts[name.strip()] = int(value)
    return parts


def resolve_worker_id() -> WorkerId:
    """The worker id the settings give this process (not yet checked against a layout)."""
    source = conf.WORKER_ID_SOURCE
    if source in ("static", "slot", "redis", "database"):
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
