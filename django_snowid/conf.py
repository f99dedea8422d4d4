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
    """Every ``SNOWID_*`` setting; nothing is read at import time. The docs' settings page
    is generated from this table (docs/_ext/snowid_reference.py): group comments become its
    sections, and every setting needs a meaning (reST markup allowed)."""

    # ----------------------------------------------------------------- ids
    EPOCH: Setting[datetime | str] = Setting(
        DEFAULT_EPOCH,
        "instant of tick 0 for every layout without its own ``epoch``; naive values are refused",
    )
    LAYOUT: Setting[str | Mapping[str, Any]] = Setting(
        "classic",
        "the default layout (``layout=None``)",
    )
    LAYOUTS: Setting[Mapping[str, str | Mapping[str, Any]]] = Setting(
        {},
        'further named layouts for ``layout="name"``',
    )
    CLOCK_BACKWARDS_TOLERANCE_MS: Setting[float] = Setting(
        5.0,
        "a clock behind the last tick by at most this much is waited out; further behind, ids "
        "are refused",
    )
    PUBLIC_ID_ALPHABET: Setting[str | None] = Setting(
        None,
        "public ids: the project's shuffled sqids alphabet (required to use them)",
    )
    PUBLIC_ID_MIN_LENGTH: Setting[int] = Setting(
        8,
        "public ids: the shortest public id (short ones are padded)",
    )

    # ---------------------------------------------------------- worker ids
    WORKER_ID: Setting[int | Mapping[str, int]] = Setting(
        0,
        'the worker id when the source is ``"static"``; a dict names the node parts, e.g. '
        '``{"datacenter": 1, "machine": 3}``. With a lease source: the fixed parts before the '
        "leased one",
    )
    WORKER_ID_SOURCE: Setting[WorkerIdSource] = Setting(
        "database",
        "where the worker id comes from",
    )
    WORKER_POOL_SIZE: Setting[int | None] = Setting(
        None,
        "at most this many leased ids (default: all values of the leased part)",
    )
    WORKER_LEASE_TTL_S: Setting[float] = Setting(
        30,
        "a lease's time-to-live; renewed every third of it",
    )
    WORKER_SLOT_DIR: Setting[str] = Setting(
        None,
        'the lock files of the ``"slot"`` source (must be on a local file system); by default '
        "one directory per project (a digest of the settings module and the default database)",
        unset=_project_slot_dir,
    )
    WORKER_RESUME_MAX_WAIT_MS: Setting[float] = Setting(
        2000,
        "the longest wait for the clock to pass a worker id's recorded tick",
    )
    WORKER_ID_ENV: Setting[str] = Setting(
        "SNOWID_WORKER_ID",
        'the environment variable read by the ``"env"`` source (``"7"`` or '
        '``"datacenter=1,machine=3"``)',
    )

    # --------------------------------------------------------------- Redis
    REDIS_ALIAS: Setting[str] = Setting(
        "default",
        "the django-redis cache alias for the parts that use Redis",
    )
    REDIS_KEY_PREFIX: Setting[str] = Setting(
        "snowid",
        "prefix of the Redis keys of order numbers and sequences (several deployments can "
        "share a Redis); worker-id leases do not use it",
    )
    #: A dotted path (or a callable) returning a redis-py client; None: django-redis.
    REDIS_CLIENT_FACTORY: Setting[Any] = Setting(
        None,
        "a callable without arguments returning the redis-py client of our Redis features (a "
        "``RedisCluster``, say) instead of the django-redis alias, for order numbers, "
        "worker-id leases and named sequences alike; no ``CACHES`` entry is needed then",
    )

    # ------------------------------------------------------- order numbers
    ORDER_BACKEND: Setting[OrderBackend] = Setting(
        "redis",
        "where order-number sequences live",
    )
    ORDER_PACKING: Setting[str] = Setting(
        "binary",
        "default packing of ``OrderNumberField``",
    )
    ORDER_SEQUENCE_BITS: Setting[int] = Setting(
        14,
        "binary: sequence bits (cap ``2**bits - 1`` a second)",
    )
    ORDER_SHARD_BITS: Setting[int] = Setting(
        4,
        "binary: shard bits (``2**bits`` shards)",
    )
    ORDER_SEQUENCE_DIGITS: Setting[int] = Setting(
        5,
        "decimal: sequence digits",
    )
    ORDER_SHARD_DIGITS: Setting[int] = Setting(
        2,
        "decimal: shard digits (``10**digits`` shards)",
    )
    ORDER_ZONE: Setting[str] = Setting(
        "UTC",
        "the zone stems are rendered in",
    )
    ORDER_CONCEAL: Setting[bool] = Setting(
        False,
        "default of ``OrderNumberField(conceal=...)``: show a keyed permutation of each "
        "second's sequences (needs ``SNOWID_ORDER_KEY``)",
    )
    ORDER_CHECK_DIGIT: Setting[str | None] = Setting(
        None,
        'default of ``OrderNumberField(check_digit=...)``: ``"luhn"``, ``"damm"`` or '
        "``None`` (decimal packing only)",
    )
    ORDER_KEY: Setting[Any] = Setting(
        None,
        "the secret of concealed order numbers: a string of at least 32 characters, or a "
        "list of ``(valid_from, key)`` pairs (ISO 8601, UTC), oldest first, in which each "
        "number's own second picks its key",
    )
    ORDER_ALLOW_DST: Setting[bool] = Setting(
        False,
        "accept a zone with daylight saving",
    )
    ORDER_WHEN_FULL: Setting[WhenFull] = Setting(
        "wait",
        "what to do when a second's sequence is used up",
    )
    ORDER_MAX_WAIT_MS: Setting[float] = Setting(
        2000,
        "the longest wait for the next second",
    )
    ORDER_MAX_BACKWARDS_S: Setting[int] = Setting(
        5,
        "how far a stream may run ahead of a clock that stepped back",
    )
    ORDER_RANDOM_START: Setting[int] = Setting(
        0,
        "each second's sequence starts at a random value in ``1..N+1``",
    )
    ORDER_BLOCK_MAX: Setting[int] = Setting(
        1024,
        "the most numbers of one second a process reserves in one store call (a block, "
        "sized by its rate; numbers left when the second ends are gaps); 1: one number a call",
    )
    ORDER_INSERT_RETRIES: Setting[int] = Setting(
        3,
        "new numbers drawn when an INSERT fails on the UNIQUE column",
    )

    # ----------------------------------------------------- named sequences
    SEQUENCES: Setting[Mapping[str, Any]] = Setting(
        {},
        "named sequences: ``kind``, ``zone``, ``start``, ``min_step``, ``max_step``",
    )
    SEQUENCES_UNKNOWN: Setting[UnknownSequences] = Setting(
        "create",
        "an undeclared name: created on first use with the defaults, or refused with "
        "``UnknownSequence``",
    )
    SEQUENCE_BACKEND: Setting[SequenceBackend] = Setting(
        "database",
        "where named sequences live",
    )
    SEQUENCE_MIN_STEP: Setting[int] = Setting(
        100,
        "the smallest raise of a Redis sequence's mark",
    )
    SEQUENCE_MAX_STEP: Setting[int] = Setting(
        1_000_000,
        "the largest planned raise (a block asked for is always covered)",
    )

    # -------------------------------------------------------- database ids
    DATABASE_NODES: Setting[int] = Setting(4, "top node values databases issue ids from")

    # ------------------------------------------- feeds: pages and polls by ids
    FEED_SETTLE_MARGIN_MS: Setting[float] = Setting(
        1000.0,
        "PostgreSQL: subtracted from the start of the oldest running transaction (or from "
        "now): covers an id drawn before its transaction began, and a database clock ahead "
        "of the app servers' (see :doc:`/paging`)",
    )
    FEED_SETTLE_WINDOW_S: Setting[float] = Setting(
        30.0,
        "SQLite, MariaDB/MySQL (and PostgreSQL sessions the app's role cannot see): ids "
        "drawn this long ago are settled; at least the longest time from drawing an id to "
        "its COMMIT, plus how far the clocks of the app servers differ",
    )

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
