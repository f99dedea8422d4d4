"""The ``SNOWID_*`` settings, read on every access so that ``override_settings`` works.

Whatever is built from the settings (layouts, generators, stores, issuers, clients) is
cached by the module that builds it and dropped through the one reaction here:
``@on_settings_changed`` registers a function that forgets such a cache, and every change
of a ``SNOWID_*`` setting or of ``CACHES`` (where django-redis finds our Redis) calls them.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from django.conf import settings
from django.core.signals import setting_changed

from .core.layout import DEFAULT_EPOCH

#: What ``SNOWID_WORKER_ID_SOURCE`` takes: a fixed number, an environment variable, or a
#: lease (a lock file on this host, a lease in Redis or in the database).
WorkerIdSource = Literal["static", "env", "slot", "redis", "database"]
#: Where order-number streams keep their state (``SNOWID_ORDER_BACKEND``).
OrderBackend = Literal["redis", "database"]
#: What a full second does (``SNOWID_ORDER_WHEN_FULL``).
WhenFull = Literal["wait", "raise"]

#: Every setting with its default. The README lists them with their meaning.
DEFAULTS: dict[str, Any] = {
    "SNOWID_EPOCH": DEFAULT_EPOCH,
    "SNOWID_LAYOUT": "classic",
    "SNOWID_LAYOUTS": {},
    "SNOWID_WORKER_ID": 0,
    "SNOWID_WORKER_ID_SOURCE": "database",
    "SNOWID_WORKER_POOL_SIZE": None,
    "SNOWID_WORKER_LEASE_TTL_S": 30,
    "SNOWID_WORKER_SLOT_DIR": None,
    "SNOWID_WORKER_RESUME_MAX_WAIT_MS": 2000,
    "SNOWID_WORKER_ID_ENV": "SNOWID_WORKER_ID",
    "SNOWID_CLOCK_BACKWARDS_TOLERANCE_MS": 5.0,
    "SNOWID_REDIS_ALIAS": "default",
    "SNOWID_REDIS_KEY_PREFIX": "snowid",
    "SNOWID_REDIS_CLIENT_FACTORY": None,
    "SNOWID_ORDER_BACKEND": "redis",
    "SNOWID_ORDER_PACKING": "binary",
    "SNOWID_ORDER_SEQUENCE_BITS": 14,
    "SNOWID_ORDER_SHARD_BITS": 4,
    "SNOWID_ORDER_SEQUENCE_DIGITS": 5,
    "SNOWID_ORDER_SHARD_DIGITS": 2,
    "SNOWID_ORDER_ZONE": "UTC",
    "SNOWID_ORDER_ALLOW_DST": False,
    "SNOWID_ORDER_WHEN_FULL": "wait",
    "SNOWID_ORDER_MAX_WAIT_MS": 2000,
    "SNOWID_ORDER_MAX_BACKWARDS_S": 5,
    "SNOWID_ORDER_RANDOM_START": 0,
    "SNOWID_ORDER_INSERT_RETRIES": 3,
    "SNOWID_PUBLIC_ID_ALPHABET": None,
    "SNOWID_PUBLIC_ID_MIN_LENGTH": 8,
}


T = TypeVar("T")


def _get(name: str) -> Any:
    return getattr(settings, name, DEFAULTS[name])


class Setting(Generic[T]):
    """One ``SNOWID_*`` setting as an attribute of :class:`SnowidSettings`, read from
    Django's settings on every access: ``EPOCH`` reads ``SNOWID_EPOCH``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = f"SNOWID_{name}"

    def __get__(self, instance: object, owner: type | None = None) -> T:
        return _get(self.name)


class SnowidSettings:
    """Typed access to the ``SNOWID_*`` settings; nothing is read at import time."""

    EPOCH: Setting[datetime | str] = Setting()
    LAYOUT: Setting[str | Mapping[str, Any]] = Setting()
    LAYOUTS: Setting[Mapping[str, str | Mapping[str, Any]]] = Setting()

    WORKER_ID: Setting[int | Mapping[str, int]] = Setting()
    WORKER_ID_SOURCE: Setting[WorkerIdSource] = Setting()
    WORKER_POOL_SIZE: Setting[int | None] = Setting()
    WORKER_LEASE_TTL_S: Setting[float] = Setting()
    WORKER_RESUME_MAX_WAIT_MS: Setting[float] = Setting()
    WORKER_ID_ENV: Setting[str] = Setting()
    CLOCK_BACKWARDS_TOLERANCE_MS: Setting[float] = Setting()

    PUBLIC_ID_ALPHABET: Setting[str | None] = Setting()
    PUBLIC_ID_MIN_LENGTH: Setting[int] = Setting()

    REDIS_ALIAS: Setting[str] = Setting()
    REDIS_KEY_PREFIX: Setting[str] = Setting()
    #: A dotted path (or a callable) returning a redis-py client; None: django-redis.
    REDIS_CLIENT_FACTORY: Setting[Any] = Setting()

    ORDER_BACKEND: Setting[OrderBackend] = Setting()
    ORDER_ALLOW_DST: Setting[bool] = Setting()
    ORDER_WHEN_FULL: Setting[WhenFull] = Setting()
    ORDER_MAX_WAIT_MS: Setting[float] = Setting()
    ORDER_MAX_BACKWARDS_S: Setting[int] = Setting()
    ORDER_RANDOM_START: Setting[int] = Setting()
    ORDER_INSERT_RETRIES: Setting[int] = Setting()

    @property
    def WORKER_SLOT_DIR(self) -> str:
        """A directory per project by default: the projects of one host never share
        slots (named after the settings module and the default database)."""
        given = _get("SNOWID_WORKER_SLOT_DIR")
        if given:
            return str(given)
        database = getattr(settings, "DATABASES", {}).get("default", {})
        project = repr(
            (
                getattr(settings, "SETTINGS_MODULE", ""),
                database.get("ENGINE"),
                database.get("HOST"),
                database.get("PORT"),
                database.get("NAME"),
            )
        )
        digest = hashlib.sha1(project.encode()).hexdigest()[:12]
        return os.path.join(tempfile.gettempdir(), "django-snowid-slots", digest)

    def order_format_default(self, name: str) -> Any:
        """``packing``, ``sequence_bits``, ... : the default of one format option."""
        return _get(f"SNOWID_ORDER_{name.upper()}")


conf = SnowidSettings()


_forget: list[Callable[[], None]] = []


def on_settings_changed(forget: Callable[[], None]) -> Callable[[], None]:
    """Register ``forget`` to run whenever a ``SNOWID_*`` setting or ``CACHES`` changes."""
    _forget.append(forget)
    return forget


def _settings_changed(*, setting: str, **kwargs: object) -> None:
    if setting.startswith("SNOWID_") or setting == "CACHES":
        for forget in _forget:
            forget()


setting_changed.connect(_settings_changed, dispatch_uid="django_snowid.settings_changed")
