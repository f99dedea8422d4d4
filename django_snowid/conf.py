"""The ``SNOWID_*`` settings: one table, each setting one line with its type (the
annotation), its default and what it means; read on every access, so that
``override_settings`` works.

Whatever is built from the settings (layouts, generators, stores, issuers, clients) is
cached by the module that builds it and dropped through the one reaction here:
``@on_settings_changed`` registers a function that forgets such a cache, and every change
of a ``SNOWID_*`` setting or of ``CACHES`` (where django-redis finds our Redis) calls them.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any, Generic, Literal, TypeVar, overload

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
#: Where named sequences live (``SNOWID_SEQUENCE_BACKEND``).
SequenceBackend = Literal["database", "redis"]
#: What an undeclared sequence name does (``SNOWID_SEQUENCES_UNKNOWN``).
UnknownSequences = Literal["create", "refuse"]

T = TypeVar("T")


class Setting(Generic[T]):
    """One ``SNOWID_*`` setting, an attribute of :class:`SnowidSettings`: ``EPOCH`` reads
    ``SNOWID_EPOCH`` from Django's settings on every access, ``default`` when it is not
    set. Read on the class, it is the table's row itself."""

    def __init__(self, default: Any, meaning: str, *, unset: Callable[[], T] | None = None) -> None:
        self.default = default
        self.meaning = meaning
        self.unset = unset  # computes the value when the setting is not given

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = f"SNOWID_{name}"

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Setting[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object, owner: type | None = None) -> T | Setting[T]:
        if instance is None:
            return self
        value = getattr(settings, self.name, self.default)
        if self.unset is not None and not value:
            return self.unset()
        return value

    def given(self) -> Any:
        """The value in Django's settings as written there (``default`` if absent)."""
        return getattr(settings, self.name, self.default)

    def is_set(self) -> bool:
        return hasattr(settings, self.name)


def _project_slot_dir() -> str:
    """A directory per project: the projects of one host never share slots (named after
    the settings module and the default database)."""
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


class SnowidSettings:
    """Every ``SNOWID_*`` setting; nothing is read at import time. The README's settings
    table says the same at more length."""

    # ----------------------------------------------------------------- ids
    EPOCH: Setting[datetime | str] = Setting(DEFAULT_EPOCH, "tick 0 of layouts without one")
    LAYOUT: Setting[str | Mapping[str, Any]] = Setting("classic", "the default layout")
    LAYOUTS: Setting[Mapping[str, str | Mapping[str, Any]]] = Setting({}, "more named layouts")
    CLOCK_BACKWARDS_TOLERANCE_MS: Setting[float] = Setting(5.0, "a clock this far back waits")
    PUBLIC_ID_ALPHABET: Setting[str | None] = Setting(None, "the shuffled sqids alphabet")
    PUBLIC_ID_MIN_LENGTH: Setting[int] = Setting(8, "the shortest public id")

    # ---------------------------------------------------------- worker ids
    WORKER_ID: Setting[int | Mapping[str, int]] = Setting(0, "fixed id, or the fixed parts")
    WORKER_ID_SOURCE: Setting[WorkerIdSource] = Setting("database", "where worker ids come from")
    WORKER_POOL_SIZE: Setting[int | None] = Setting(None, "at most this many leased ids")
    WORKER_LEASE_TTL_S: Setting[float] = Setting(30, "a lease's time-to-live")
    WORKER_SLOT_DIR: Setting[str] = Setting(None, "slot lock files", unset=_project_slot_dir)
    WORKER_RESUME_MAX_WAIT_MS: Setting[float] = Setting(2000, "longest wait for a recorded tick")
    WORKER_ID_ENV: Setting[str] = Setting("SNOWID_WORKER_ID", "the 'env' source's variable")

    # --------------------------------------------------------------- Redis
    REDIS_ALIAS: Setting[str] = Setting("default", "the django-redis cache alias")
    REDIS_KEY_PREFIX: Setting[str] = Setting("snowid", "prefix of order and sequence keys")
    #: A dotted path (or a callable) returning a redis-py client; None: django-redis.
    REDIS_CLIENT_FACTORY: Setting[Any] = Setting(None, "makes the redis-py client instead")

    # ------------------------------------------------------- order numbers
    ORDER_BACKEND: Setting[OrderBackend] = Setting("redis", "where streams keep their state")
    ORDER_PACKING: Setting[str] = Setting("binary", "binary or decimal numbers")
    ORDER_SEQUENCE_BITS: Setting[int] = Setting(14, "binary: sequence bits")
    ORDER_SHARD_BITS: Setting[int] = Setting(4, "binary: shard bits")
    ORDER_SEQUENCE_DIGITS: Setting[int] = Setting(5, "decimal: sequence digits")
    ORDER_SHARD_DIGITS: Setting[int] = Setting(2, "decimal: shard digits")
    ORDER_ZONE: Setting[str] = Setting("UTC", "the zone stems are written in")
    ORDER_ALLOW_DST: Setting[bool] = Setting(False, "accept a zone with daylight saving")
    ORDER_WHEN_FULL: Setting[WhenFull] = Setting("wait", "what a full second does")
    ORDER_MAX_WAIT_MS: Setting[float] = Setting(2000, "the longest wait for the next second")
    ORDER_MAX_BACKWARDS_S: Setting[int] = Setting(5, "how far ahead of the clock a stream runs")
    ORDER_RANDOM_START: Setting[int] = Setting(0, "each second starts at 1 + random 0..N")
    ORDER_INSERT_RETRIES: Setting[int] = Setting(3, "new numbers after a UNIQUE conflict")

    # ----------------------------------------------------- named sequences
    SEQUENCES: Setting[Mapping[str, Any]] = Setting({}, "the declared sequences")
    SEQUENCES_UNKNOWN: Setting[UnknownSequences] = Setting("create", "an undeclared name")
    SEQUENCE_BACKEND: Setting[SequenceBackend] = Setting("database", "where sequences live")
    SEQUENCE_MIN_STEP: Setting[int] = Setting(100, "the smallest raise of a Redis mark")
    SEQUENCE_MAX_STEP: Setting[int] = Setting(1_000_000, "the largest planned raise")

    # ------------------------------------------- operations: health and metrics
    METRICS: Setting[bool] = Setting(False, "expose Prometheus metrics (prometheus_client)")
    HEALTH_TIME_BITS_HORIZON: Setting[timedelta] = Setting(
        timedelta(days=5 * 365), "health fails when a layout's time bits end sooner"
    )

    def order_format_default(self, name: str) -> Any:
        """``packing``, ``sequence_bits``, ... : the default of one format option."""
        return getattr(self, f"ORDER_{name.upper()}")

    @classmethod
    def table(cls) -> Iterator[Setting[Any]]:
        """Every setting, in the order above."""
        for value in vars(cls).values():
            if isinstance(value, Setting):
                yield value


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
