"""What the system checks share: messages whose hint points at the README, the number
test of numeric settings, and the configured layouts (with E003 for those that do not
build)."""

from __future__ import annotations

import numbers
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning

from .conf import conf
from .core.layout import Layout, parse_epoch
from .exceptions import LayoutError
from .ids.issuer import build_layout, layout_names

__all__ = ["HINT", "configured_layouts", "error", "is_number", "redis_cache_problem", "warning"]

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
