"""System checks of the worker-id settings (``SNOWID_WORKER_*``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from django.core.checks import CheckMessage, Tags

from ..checks import DEPLOY, Check, configured_layouts, error, is_number, warning
from ..conf import SnowidSettings, conf
from ..exceptions import LayoutError, WorkerIdError
from ..stores.checks import store_checks
from .pool import pool_for
from .sources import LEASE_SOURCES, resolve_worker_id, worker_node
from .stores import LEASES, get_lease_store

__all__ = [
    "CHECKS",
    "check_lease_table",
    "check_worker_env",
    "check_worker_id",
    "check_worker_settings",
]


def check_worker_id(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if conf.WORKER_ID_SOURCE == "env" and os.environ.get(str(conf.WORKER_ID_ENV)) is None:
        return []  # migrate runs without it; check --deploy says it (E050)
    if not _worker_id_shaped(conf.WORKER_ID):
        return []  # E015 says it
    try:
        worker = resolve_worker_id()
    except WorkerIdError as exc:
        return [error(str(exc), "django_snowid.E006")]
    layouts, _ = configured_layouts()
    messages: list[CheckMessage] = []
    for layout in layouts:
        try:
            if conf.WORKER_ID_SOURCE in LEASE_SOURCES:
                # Leased: SNOWID_WORKER_ID only fixes the parts before the leased one.
                pool = pool_for(layout, worker)
                pool.node(pool.size - 1)
            else:
                worker_node(layout, worker)
        except (LayoutError, WorkerIdError) as exc:
            messages.append(error(f"The worker id does not fit: {exc}", "django_snowid.E004"))
    return messages


def check_worker_env(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """E050 (``check --deploy``): the ``env`` source's variable is not set."""
    name = str(conf.WORKER_ID_ENV)
    if conf.WORKER_ID_SOURCE != "env" or os.environ.get(name) is not None:
        return []
    return [
        error(
            f"SNOWID_WORKER_ID_SOURCE is 'env' and {name} is not set: the first id of a "
            f"server started here would refuse. Set {name} to a worker id distinct per "
            "process, in the environment the server runs in.",
            "django_snowid.E050",
        )
    ]


def check_worker_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Type and range of every worker-id setting, and what the chosen source needs."""
    messages = [*_lease_setting_errors(), *_source_setting_errors(), *store_checks(LEASES)]
    if LEASES.in_use() and get_lease_store().needs.one_host and not _hosts_told_apart():
        messages.append(
            warning(
                "SNOWID_WORKER_ID_SOURCE is 'slot': lock files are unique on one host only, "
                "and nothing tells hosts apart (SNOWID_WORKER_ID fixes no node part before the "
                "leased one), so every host, container or PrivateTmp unit starts at worker 0. "
                "With several hosts use 'database' or 'redis'; on one host, silence this check.",
                "django_snowid.W010",
            )
        )
    return messages


def _lease_setting_errors() -> list[CheckMessage]:
    """E010-E012: the lease's time-to-live, pool size and wait on resuming."""
    messages: list[CheckMessage] = []
    ttl = conf.WORKER_LEASE_TTL_S
    if not is_number(ttl, above=0):
        messages.append(
            error(
                f"SNOWID_WORKER_LEASE_TTL_S is {ttl!r}; expected a number of seconds > 0.",
                "django_snowid.E010",
            )
        )
    size = conf.WORKER_POOL_SIZE
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        messages.append(
            error(
                f"SNOWID_WORKER_POOL_SIZE is {size!r}; expected None or an integer >= 1.",
                "django_snowid.E011",
            )
        )
    wait = conf.WORKER_RESUME_MAX_WAIT_MS
    if not is_number(wait, least=0):
        messages.append(
            error(
                f"SNOWID_WORKER_RESUME_MAX_WAIT_MS is {wait!r}; expected a number of "
                "milliseconds >= 0.",
                "django_snowid.E012",
            )
        )
    return messages


def _source_setting_errors() -> list[CheckMessage]:
    """E013-E015: the lock files' directory, the variable's name and the worker id."""
    messages: list[CheckMessage] = []
    directory = SnowidSettings.WORKER_SLOT_DIR.given()
    if directory is not None and not (isinstance(directory, str | os.PathLike) and str(directory)):
        messages.append(
            error(
                f"SNOWID_WORKER_SLOT_DIR is {directory!r}; expected None or a directory path.",
                "django_snowid.E013",
            )
        )
    env = conf.WORKER_ID_ENV
    if not isinstance(env, str) or not env or "=" in env:
        messages.append(
            error(
                f"SNOWID_WORKER_ID_ENV is {env!r}; expected the name of an environment variable.",
                "django_snowid.E014",
            )
        )
    worker = conf.WORKER_ID
    if not _worker_id_shaped(worker):
        messages.append(
            error(
                f"SNOWID_WORKER_ID is {worker!r}; expected an integer >= 0 or a dict of "
                "node part names to integers >= 0.",
                "django_snowid.E015",
            )
        )
    return messages


def _worker_id_shaped(worker: object) -> bool:
    def natural(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0

    if isinstance(worker, Mapping):
        return all(isinstance(k, str) and natural(v) for k, v in worker.items())
    return natural(worker)


def _hosts_told_apart() -> bool:
    """Whether every layout leases only its last node part, the parts before it being
    given by ``SNOWID_WORKER_ID`` (a per-host value, e.g. the datacenter or host number)."""
    if not SnowidSettings.WORKER_ID.is_set():
        return False
    layouts, _ = configured_layouts()
    return bool(layouts) and all(len(layout.node_parts) > 1 for layout in layouts)


def check_lease_table(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[CheckMessage]:
    """E017: the lease table of the ``database`` source is missing (``check --database``;
    silent inside ``migrate``, which creates it)."""
    return store_checks(LEASES, databases) if databases else []


#: The checks of worker ids, with their tags: ``AppConfig.ready()`` registers them.
CHECKS: tuple[Check, ...] = (
    (check_worker_id, Tags.compatibility),
    (check_worker_env, DEPLOY),
    (check_worker_settings, Tags.compatibility),
    (check_lease_table, Tags.database),
)
