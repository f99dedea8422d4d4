"""The one redis-py client of our Redis parts: django-redis's connection of
``SNOWID_REDIS_ALIAS``, or what ``SNOWID_REDIS_CLIENT_FACTORY`` makes (docs/redis.rst)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from django.utils.module_loading import import_string

from ..conf import conf, on_settings_changed
from ..exceptions import RedisClientError

__all__ = ["describe", "factory", "get_client"]


_lock = threading.Lock()
#: This process's client, until the settings change (a forked child makes its own).
_client: list[Any] = []


def _forked() -> None:
    global _lock
    _lock = threading.Lock()  # another thread may have held it at the fork
    _client.clear()


on_settings_changed(_client.clear)
os.register_at_fork(after_in_child=_forked)


def factory() -> Callable[[], Any] | None:
    """The callable ``SNOWID_REDIS_CLIENT_FACTORY`` names, or None when it is not set."""
    path = conf.REDIS_CLIENT_FACTORY
    if path is None:
        return None
    if callable(path):
        return path
    if not isinstance(path, str):
        raise RedisClientError(
            f"SNOWID_REDIS_CLIENT_FACTORY is {path!r}; expected a dotted path to a "
            "callable that returns a redis-py client."
        )
    try:
        made = import_string(path)
    except ImportError as exc:
        raise RedisClientError(
            f"SNOWID_REDIS_CLIENT_FACTORY {path!r} cannot be imported: {exc}"
        ) from exc
    if not callable(made):
        raise RedisClientError(
            f"SNOWID_REDIS_CLIENT_FACTORY {path!r} is {type(made).__name__}, not a callable.",
            "django_snowid.E501",
        )
    return made


def get_client() -> Any:
    """The redis-py client of our Redis features (order numbers, leases, sequences)."""
    if _client:
        return _client[0]
    with _lock:
        if not _client:
            _client.append(_make(conf.REDIS_ALIAS))
        return _client[0]


def _make(alias: str) -> Any:
    make = factory()
    if make is not None:
        return make()
    from django.core.cache import InvalidCacheBackendError
    from django_redis import get_redis_connection

    try:
        return get_redis_connection(alias)
    except NotImplementedError:
        raise RedisClientError(
            f"The cache alias {alias!r} (SNOWID_REDIS_ALIAS) is not a django-redis cache; "
            "or set SNOWID_REDIS_CLIENT_FACTORY."
        ) from None
    except (KeyError, InvalidCacheBackendError):
        raise RedisClientError(f"CACHES has no alias {alias!r} (SNOWID_REDIS_ALIAS).") from None


def describe() -> str:
    """How the client is chosen, for error messages."""
    path = conf.REDIS_CLIENT_FACTORY
    if path is not None:
        return f"SNOWID_REDIS_CLIENT_FACTORY {path!r}"
    return f"cache alias {conf.REDIS_ALIAS!r}"
