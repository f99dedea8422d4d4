"""What the system checks share, and the checks of what every feature shares (the Redis
client, E500 and E501).

A misconfiguration must stop ``runserver``/``migrate``/``check`` at startup, never
surface at the first insert. Each id is documented in the README under "System checks".
Each feature keeps its checks in its own ``checks`` module, listed in its ``CHECKS``;
``AppConfig.ready()`` registers them (:func:`register`), importing registers nothing.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning
from django.core.checks import register as register_check

from .conf import conf
from .core.layout import Layout, parse_epoch
from .exceptions import LayoutError, RedisClientError
from .layouts import build_layout, layout_names
from .redis.client import factory

__all__ = [
    "CHECKS",
    "HINT",
    "Check",
    "configured_layouts",
    "error",
    "is_number",
    "redis_cache_problem",
    "register",
    "warning",
]

#: A check function and its tag.
Check = tuple[Callable[..., list[CheckMessage]], str]

HINT = "See the README section 'System checks', {id}."


def error(msg: str, id_: str) -> Error:
    return Error(msg, hint=HINT.format(id=id_), id=id_)


def warning(msg: str, id_: str) -> Warning:
    return Warning(msg, hint=HINT.format(id=id_), id=id_)


def is_number(value: object, *, above: float | None = None, least: float | None = None) -> bool:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    number = float(value)
    return (above is None or number > above) and (least is None or number >= least)


def redis_cache_problem(alias: str) -> str:
    """Why our Redis parts have no client through ``CACHES[alias]``, or ``""``. With
    ``SNOWID_REDIS_CLIENT_FACTORY`` set, the factory makes the client and no cache is
    needed (E500 and E501 check the factory)."""
    if conf.REDIS_CLIENT_FACTORY is not None:
        return ""
    caches: dict[str, dict[str, Any]] = getattr(settings, "CACHES", {})
    if alias not in caches:
        return f"CACHES[{alias!r}] is missing; it must be a django_redis cache"
    backend = caches[alias].get("BACKEND", "")
    if not backend.startswith("django_redis."):
        return f"CACHES[{alias!r}] is {backend!r}; it must be a django_redis cache"
    return ""


def check_redis_client(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """SNOWID_REDIS_CLIENT_FACTORY must name a callable (it is not called here: that would
    connect to Redis)."""
    try:
        factory()
    except RedisClientError as exc:
        return [error(str(exc), exc.check_id)]
    return []


CHECKS: tuple[Check, ...] = ((check_redis_client, Tags.compatibility),)


def register(checks: Iterable[Check]) -> None:
    """Register ``checks`` (a feature's ``CHECKS``) with Django; called by ``ready()``."""
    for check, tag in checks:
        register_check(check, tag)


def configured_layouts() -> tuple[list[Layout], list[CheckMessage]]:
    """The layouts of the settings that build, and an E003 for each that does not."""
    layouts: list[Layout] = []
    errors: list[CheckMessage] = []
    try:
        parse_epoch(conf.EPOCH)
        epoch_error = ""
    except LayoutError as exc:
        epoch_error = str(exc)
    for name in layout_names():
        setting = "SNOWID_LAYOUT" if name == "default" else f"SNOWID_LAYOUTS[{name!r}]"
        try:
            layouts.append(build_layout(name))
        except (LayoutError, TypeError) as exc:
            if str(exc) == epoch_error:
                continue  # the shared SNOWID_EPOCH: E001 says it once, not once a layout
            errors.append(error(f"{setting} is invalid: {exc}", "django_snowid.E003"))
    return layouts, errors
