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
from typing import Any, Literal

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


def _get(name: str) -> Any:
    return getattr(settings, name, DEFAULTS[name])


class SnowidSettings:
    """Typed access to the ``SNOWID_*`` settings; nothing is read at import time."""

    @property
    def EPOCH(self) -> datetime | str:
        return _get("SNOWID_EPOCH")

    @property
    def LAYOUT(self) -> str | Mapping[str, Any]:
        return _get("SNOWID_LAYOUT")

    @property
    def LAYOUTS(self) -> Mapping[str, str | Mapping[str, Any]]:
        return _get("SNOWID_LAYOUTS")

    @property
    def WORKER_ID(self) -> int | Mapping[str, int]:
        return _get("SNOWID_WORKER_ID")

    @property
    def WORKER_ID_SOURCE(self) -> WorkerIdSource:
        return _get("SNOWID_WORKER_ID_SOURCE")

    @property
    def WORKER_POOL_SIZE(self) -> int | None:
        return _get("SNOWID_WORKER_POOL_SIZE")

    @property
    def WORKER_LEASE_TTL_S(self) -> float:
        return _get("SNOWID_WORKER_LEASE_TTL_S")

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

    @property
    def WORKER_RESUME_MAX_WAIT_MS(self) -> float:
        return _get("SNOWID_WORKER_RESUME_MAX_WAIT_MS")

    @property
    def WORKER_ID_ENV(self) -> str:
        return _get("SNOWID_WORKER_ID_ENV")

    @property
    def CLOCK_BACKWARDS_TOLERANCE_MS(self) -> float:
        return _get("SNOWID_CLOCK_BACKWARDS_TOLERANCE_MS")

    @property
    def PUBLIC_ID_ALPHABET(self) -> str | None:
        return _get("SNOWID_PUBLIC_ID_ALPHABET")

    @property
    def PUBLIC_ID_MIN_LENGTH(self) -> int:
        return _get("SNOWID_PUBLIC_ID_MIN_LENGTH")

    @property
    def REDIS_ALIAS(self) -> str:
        return _get("SNOWID_REDIS_ALIAS")

    @property
    def REDIS_KEY_PREFIX(self) -> str:
        return _get("SNOWID_REDIS_KEY_PREFIX")

    @property
    def REDIS_CLIENT_FACTORY(self) -> Any:
        """A dotted path (or a callable) returning a redis-py client; None: django-redis."""
        return _get("SNOWID_REDIS_CLIENT_FACTORY")

    # ------------------------------------------------------- order numbers
    @property
    def ORDER_BACKEND(self) -> OrderBackend:
        return _get("SNOWID_ORDER_BACKEND")

    def order_format_default(self, name: str) -> Any:
        """``packing``, ``sequence_bits``, ... : the default of one format option."""
        return _get(f"SNOWID_ORDER_{name.upper()}")

    @property
    def ORDER_ALLOW_DST(self) -> bool:
        return _get("SNOWID_ORDER_ALLOW_DST")

    @property
    def ORDER_WHEN_FULL(self) -> WhenFull:
        return _get("SNOWID_ORDER_WHEN_FULL")

    @property
    def ORDER_MAX_WAIT_MS(self) -> float:
        return _get("SNOWID_ORDER_MAX_WAIT_MS")

    @property
    def ORDER_MAX_BACKWARDS_S(self) -> int:
        return _get("SNOWID_ORDER_MAX_BACKWARDS_S")

    @property
    def ORDER_RANDOM_START(self) -> int:
        return _get("SNOWID_ORDER_RANDOM_START")

    @property
    def ORDER_INSERT_RETRIES(self) -> int:
        return _get("SNOWID_ORDER_INSERT_RETRIES")


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
