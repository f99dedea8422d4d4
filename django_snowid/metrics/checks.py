"""System checks of the operations settings: ``SNOWID_METRICS`` (and the directory of
prometheus_client's multiprocess mode) and ``SNOWID_HEALTH_TIME_BITS_HORIZON`` (ids
E700-E749, W700-W749)."""

from __future__ import annotations

import importlib.util
import os
from datetime import datetime, timedelta, timezone
from typing import Any

from django.core.checks import CheckMessage, Tags

from ..checks import Check, configured_layouts, error, warning
from ..conf import conf
from . import multiprocess_dir

__all__ = ["CHECKS", "check_metrics", "check_time_bits_horizon"]


def check_metrics(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    value = conf.METRICS
    if not isinstance(value, bool):
        return [
            error(f"SNOWID_METRICS is {value!r}: expected True or False.", "django_snowid.E701")
        ]
    if value and importlib.util.find_spec("prometheus_client") is None:
        return [
            error(
                "SNOWID_METRICS is True but prometheus_client is not installed: install "
                "django-snowid[metrics], or set SNOWID_METRICS = False.",
                "django_snowid.E700",
            )
        ]
    directory = multiprocess_dir()
    if value and directory and not (os.path.isdir(directory) and os.access(directory, os.W_OK)):
        return [
            error(
                f"PROMETHEUS_MULTIPROC_DIR is {directory!r}, which is not a directory this "
                "process can write: no worker's metrics would reach a scrape. Create it "
                "(empty) before the server starts, or unset the variable.",
                "django_snowid.E703",
            )
        ]
    return []


def check_time_bits_horizon(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    horizon = conf.HEALTH_TIME_BITS_HORIZON
    if not isinstance(horizon, timedelta) or horizon < timedelta(0):
        return [
            error(
                f"SNOWID_HEALTH_TIME_BITS_HORIZON is {horizon!r}: expected a datetime.timedelta "
                "of zero or more (e.g. timedelta(days=5 * 365)).",
                "django_snowid.E702",
            )
        ]
    now = datetime.now(timezone.utc)
    messages: list[CheckMessage] = []
    for layout in configured_layouts()[0]:
        if layout.exhausted_at - now < horizon:
            messages.append(
                warning(
                    f"The time bits of layout {layout.name!r} run out at "
                    f"{layout.exhausted_at.isoformat()}, within SNOWID_HEALTH_TIME_BITS_HORIZON "
                    f"({horizon.days} days): plan the move to a layout with a later epoch or "
                    "more time bits.",
                    "django_snowid.W700",
                )
            )
    return messages


CHECKS: tuple[Check, ...] = (
    (check_metrics, Tags.compatibility),
    (check_time_bits_horizon, Tags.compatibility),
)
