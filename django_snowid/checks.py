"""System checks for the ``SNOWID_*`` settings.

A misconfiguration must stop ``runserver``/``migrate``/``check`` at startup, never
surface at the first insert. Each id is documented in the README under "System checks".
"""

from __future__ import annotations

import numbers
from datetime import datetime, timedelta, timezone
from typing import Any

from django.core.checks import CheckMessage, Error, Tags, Warning, register

from .conf import conf
from .core.layout import Layout, parse_epoch
from .exceptions import LayoutError, WorkerIdError
from .registry import build_layout, layout_names, worker_node
from .workers import resolve_worker_id

HINT = "See the README section 'System checks', {id}."
EXHAUSTION_WARNING = timedelta(days=3653)  # ten years


def _error(msg: str, id_: str) -> Error:
    return Error(msg, hint=HINT.format(id=id_), id=id_)


def _warning(msg: str, id_: str) -> Warning:
    return Warning(msg, hint=HINT.format(id=id_), id=id_)


def _now() -> datetime:
    return datetime.now(timezone.utc)


@register(Tags.compatibility)
def check_epoch(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    try:
        epoch = parse_epoch(conf.EPOCH)
    except LayoutError as exc:
        return [_error(f"SNOWID_EPOCH is invalid: {exc}", "django_snowid.E001")]
    if epoch > _now():
        return [
            _error(
                f"SNOWID_EPOCH {epoch.isoformat()} is in the future: every id would need a "
                "negative time part.",
                "django_snowid.E002",
            )
        ]
    return []


def _layouts() -> tuple[list[Layout], list[CheckMessage]]:
    layouts: list[Layout] = []
    errors: list[CheckMessage] = []
    for name in layout_names():
        setting = "SNOWID_LAYOUT" if name == "default" else f"SNOWID_LAYOUTS[{name!r}]"
        try:
            layouts.append(build_layout(name))
        except (LayoutError, TypeError) as exc:
            errors.append(_error(f"{setting} is invalid: {exc}", "django_snowid.E003"))
    return layouts, errors


@register(Tags.compatibility)
def check_layouts(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    layouts, messages = _layouts()
    now = _now()
    for layout in layouts:
        if layout.epoch > now:
            continue  # E002 (or its own epoch) says it
        if layout.exhausted_at <= now:
            messages.append(
                _error(
                    f"The time bits of layout {layout.name!r} ({layout.describe()}) ran out at "
                    f"{layout.exhausted_at.isoformat()}: no id can be issued.",
                    "django_snowid.E005",
                )
            )
        elif layout.exhausted_at - now < EXHAUSTION_WARNING:
            messages.append(
                _warning(
                    f"The time bits of layout {layout.name!r} ({layout.describe()}) run out at "
                    f"{layout.exhausted_at.isoformat()}, within ten years.",
                    "django_snowid.W001",
                )
            )
    return messages


@register(Tags.compatibility)
def check_worker_id(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    try:
        worker = resolve_worker_id()
    except WorkerIdError as exc:
        return [_error(str(exc), "django_snowid.E006")]
    from .leases.holder import LEASE_SOURCES, pool_for

    layouts, _ = _layouts()
    messages: list[CheckMessage] = []
    for layout in layouts:
        try:
            if conf.WORKER_ID_SOURCE in LEASE_SOURCES:
                # Leased: SNOWID_WORKER_ID only fixes the parts before the leased one.
                pool = pool_for(layout, layout.name, worker)
                pool.node(pool.size - 1)
            else:
                worker_node(layout, worker)
        except (LayoutError, WorkerIdError) as exc:
            messages.append(_error(f"The worker id does not fit: {exc}", "django_snowid.E004"))
    return messages


@register(Tags.compatibility)
def check_clock_tolerance(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    value = conf.CLOCK_BACKWARDS_TOLERANCE_MS
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < 0:
        return [
            _error(
                f"SNOWID_CLOCK_BACKWARDS_TOLERANCE_MS is {value!r}; expected a number of "
                "milliseconds >= 0.",
                "django_snowid.E007",
            )
        ]
    return []


@register(Tags.compatibility)
def check_redis_client(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """SNOWID_REDIS_CLIENT_FACTORY must name a callable (it is not called here: that would
    connect to Redis)."""
    from .redisclient import RedisClientError, factory

    try:
        factory()
    except RedisClientError as exc:
        return [_error(str(exc), exc.check_id)]
    return []


@register(Tags.compatibility)
def check_order_numbers(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    from django.conf import settings

    from .ordernumbers.field import check_backend
    from .ordernumbers.issuer import stream_fields

    messages = check_backend()
    if messages or not stream_fields():
        return messages
    if conf.ORDER_BACKEND == "redis":
        alias = conf.REDIS_ALIAS
        backend = settings.CACHES.get(alias, {}).get("BACKEND", "")
        if not backend.startswith("django_redis."):
            messages.append(
                _error(
                    f"Order numbers use Redis through the cache alias {alias!r} "
                    f"(SNOWID_REDIS_ALIAS), but CACHES[{alias!r}] is "
                    f"{'missing' if alias not in settings.CACHES else repr(backend)}; it must be "
                    "a django_redis cache. Or set SNOWID_ORDER_BACKEND = 'database'.",
                    "django_snowid.E206",
                )
            )
    spread, when_full = conf.ORDER_RANDOM_START, conf.ORDER_WHEN_FULL
    if isinstance(spread, bool) or not isinstance(spread, int) or spread < 0:
        messages.append(
            _error(
                f"SNOWID_ORDER_RANDOM_START is {spread!r}; expected an integer >= 0.",
                "django_snowid.E207",
            )
        )
    else:
        for field in stream_fields():
            try:
                cap = field.format.max_sequence
            except LayoutError:
                continue  # E202 says it
            if spread >= cap:
                messages.append(
                    _error(
                        f"SNOWID_ORDER_RANDOM_START={spread} leaves no sequence of the "
                        f"{cap} per second of stream {field.stream!r}.",
                        "django_snowid.E207",
                    )
                )
                break
    if when_full not in ("wait", "raise"):
        messages.append(
            _error(
                f"SNOWID_ORDER_WHEN_FULL is {when_full!r}; expected 'wait' or 'raise'.",
                "django_snowid.E208",
            )
        )
    if not isinstance(conf.ORDER_SEND_AHEAD, bool):
        messages.append(
            _error(
                f"SNOWID_ORDER_SEND_AHEAD is {conf.ORDER_SEND_AHEAD!r}; expected True or False.",
                "django_snowid.E209",
            )
        )
    return messages
