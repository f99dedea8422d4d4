"""System checks for the ``SNOWID_*`` settings.

A misconfiguration must stop ``runserver``/``migrate``/``check`` at startup, never
surface at the first insert. Each id is documented in the README under "System checks".
The checks are registered by ``AppConfig.ready()`` (:func:`register_checks`), not when
this module is imported.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any, get_args

from django.apps import apps
from django.conf import settings
from django.core.checks import CheckMessage, Tags, register
from django.utils.module_loading import import_string

from . import inventory
from .checkhelp import configured_layouts, error, is_number, redis_cache_problem, warning
from .conf import WhenFull, _get, conf
from .core.layout import parse_epoch
from .exceptions import LayoutError
from .fields import SnowflakeAutoField
from .orders.formats import build_format
from .orders.stores import BACKENDS
from .redis.client import RedisClientError, factory
from .workers.checks import check_worker_id, check_worker_settings

EXHAUSTION_WARNING = timedelta(days=3653)  # ten years


def _now() -> datetime:
    return datetime.now(timezone.utc)


def check_epoch(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    try:
        epoch = parse_epoch(conf.EPOCH)
    except LayoutError as exc:
        return [error(f"SNOWID_EPOCH is invalid: {exc}", "django_snowid.E001")]
    if epoch > _now():
        when = f"SNOWID_EPOCH {epoch.isoformat()} is in the future"
        return [error(f"{when}: every id would need a negative time part.", "django_snowid.E002")]
    return []


def check_layouts(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    layouts, messages = configured_layouts()
    now = _now()
    for layout in layouts:
        if layout.epoch > now:
            continue  # E002 (or its own epoch) says it
        if layout.exhausted_at <= now:
            messages.append(
                error(
                    f"The time bits of layout {layout.name!r} ({layout.describe()}) ran out at "
                    f"{layout.exhausted_at.isoformat()}: no id can be issued.",
                    "django_snowid.E005",
                )
            )
        elif layout.exhausted_at - now < EXHAUSTION_WARNING:
            messages.append(
                warning(
                    f"The time bits of layout {layout.name!r} ({layout.describe()}) run out at "
                    f"{layout.exhausted_at.isoformat()}, within ten years.",
                    "django_snowid.W001",
                )
            )
    return messages


def check_clock_tolerance(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    value = conf.CLOCK_BACKWARDS_TOLERANCE_MS
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < 0:
        expected = "expected a number of milliseconds >= 0"
        return [
            error(
                f"SNOWID_CLOCK_BACKWARDS_TOLERANCE_MS is {value!r}; {expected}.",
                "django_snowid.E007",
            )
        ]
    return []


def check_redis_client(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """SNOWID_REDIS_CLIENT_FACTORY must name a callable (it is not called here: that would
    connect to Redis)."""
    try:
        factory()
    except RedisClientError as exc:
        return [error(str(exc), exc.check_id)]
    return []


def check_order_numbers(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if conf.ORDER_BACKEND not in BACKENDS:
        return [
            error(
                f"SNOWID_ORDER_BACKEND is {conf.ORDER_BACKEND!r}; "
                f"expected one of {list(BACKENDS)}.",
                "django_snowid.E205",
            )
        ]
    order_fields = inventory.order_fields()
    if not order_fields:
        return []
    messages: list[CheckMessage] = []
    if conf.ORDER_BACKEND == "redis":
        alias = conf.REDIS_ALIAS
        problem = redis_cache_problem(alias)
        if problem:
            messages.append(
                error(
                    f"Order numbers use Redis through the cache alias {alias!r} "
                    f"(SNOWID_REDIS_ALIAS), but {problem}. Or set "
                    "SNOWID_ORDER_BACKEND = 'database'.",
                    "django_snowid.E206",
                )
            )
    spread, when_full = conf.ORDER_RANDOM_START, conf.ORDER_WHEN_FULL
    if isinstance(spread, bool) or not isinstance(spread, int) or spread < 0:
        messages.append(
            error(
                f"SNOWID_ORDER_RANDOM_START is {spread!r}; expected an integer >= 0.",
                "django_snowid.E207",
            )
        )
    else:
        for field in order_fields:
            try:
                cap = field.format.max_sequence
            except LayoutError:
                continue  # E202 says it
            if spread >= cap:
                messages.append(
                    error(
                        f"SNOWID_ORDER_RANDOM_START={spread} leaves no sequence of the "
                        f"{cap} per second of stream {field.stream!r}.",
                        "django_snowid.E207",
                    )
                )
                break
    if when_full not in get_args(WhenFull):
        messages.append(
            error(
                f"SNOWID_ORDER_WHEN_FULL is {when_full!r}; expected 'wait' or 'raise'.",
                "django_snowid.E208",
            )
        )
    return messages


def check_public_ids(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    alphabet, min_length = conf.PUBLIC_ID_ALPHABET, conf.PUBLIC_ID_MIN_LENGTH
    if alphabet is None:
        return []  # public ids not used; decode_id() says what to set if they are
    try:
        from sqids import Sqids
        from sqids.constants import DEFAULT_ALPHABET
    except ImportError:
        return [
            error(
                "SNOWID_PUBLIC_ID_ALPHABET is set but sqids is not installed "
                "(pip install 'django-snowid[sqids]').",
                "django_snowid.E402",
            )
        ]
    if not isinstance(alphabet, str) or isinstance(min_length, bool):
        problem = "the alphabet must be a string and the minimum length an integer"
    else:
        try:
            Sqids(alphabet=alphabet, min_length=min_length)
            problem = ""
        except (TypeError, ValueError) as exc:
            problem = str(exc)
    if problem:
        return [
            error(
                f"SNOWID_PUBLIC_ID_ALPHABET={alphabet!r} / SNOWID_PUBLIC_ID_MIN_LENGTH="
                f"{min_length!r}: {problem}.",
                "django_snowid.E401",
            )
        ]
    if alphabet == DEFAULT_ALPHABET:
        return [
            warning(
                "SNOWID_PUBLIC_ID_ALPHABET is sqids' default alphabet: anyone with the "
                "library decodes your public ids. Shuffle it once for this project.",
                "django_snowid.W400",
            )
        ]
    return []


def _project_app(config: Any) -> bool:
    """An app of the project itself: not Django's own, not an installed distribution
    (their authors chose their keys; SILENCED_SYSTEM_CHECKS is for the rest)."""
    path = str(getattr(config, "path", ""))
    if config.name.startswith("django.") or config.name == "django_snowid":
        return False  # ours keeps BigAutoField for its bookkeeping tables on purpose
    return not any(part in path for part in ("site-packages", "dist-packages"))


def check_app_default_auto_field(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """``startapp`` writes ``default_auto_field = "django.db.models.BigAutoField"`` into a
    new app's ``apps.py``; it silently wins over a ``DEFAULT_AUTO_FIELD`` that names ours,
    and the admin mixin then has nothing to decode."""

    try:
        ours = issubclass(import_string(settings.DEFAULT_AUTO_FIELD), SnowflakeAutoField)
    except (ImportError, TypeError, AttributeError):  # Django's own check reports it
        return []
    if not ours:
        return []
    warnings: list[CheckMessage] = []
    for config in app_configs or apps.get_app_configs():
        overridden = getattr(config, "_is_default_auto_field_overridden", False)
        if not (overridden and _project_app(config)):
            continue
        losers = [
            model.__name__
            for model in config.get_models()
            if model._meta.pk is not None
            and model._meta.pk.auto_created
            and not isinstance(model._meta.pk, SnowflakeAutoField)
        ]
        if losers:
            warnings.append(
                warning(
                    f"App {config.label!r} sets default_auto_field = "
                    f"{config.default_auto_field!r} in its AppConfig, which overrides "
                    f"DEFAULT_AUTO_FIELD ({settings.DEFAULT_AUTO_FIELD}): "
                    f"{', '.join(sorted(losers))} get no Snowflake primary key. Remove that "
                    "line from its apps.py (startapp writes it) to use DEFAULT_AUTO_FIELD.",
                    "django_snowid.W030",
                )
            )
    return warnings


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# setting, whether a value is valid, what is expected, check id
_ORDER_SETTINGS: tuple[tuple[str, Any, str, str], ...] = (
    ("ALLOW_DST", lambda v: isinstance(v, bool), "True or False", "E210"),
    (
        "MAX_WAIT_MS",
        lambda v: is_number(v) and 0 <= v <= 60_000,
        "a number of milliseconds from 0 to 60000",
        "E211",
    ),
    (
        "MAX_BACKWARDS_S",
        lambda v: _is_int(v) and 1 <= v <= 3600,
        "an integer number of seconds from 1 to 3600 (a recovered stream resumes one second ahead)",
        "E212",
    ),
    (
        "INSERT_RETRIES",
        lambda v: _is_int(v) and 0 <= v <= 100,
        "an integer from 0 to 100",
        "E213",
    ),
)


def check_order_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Type and range of the order-number settings the format checks do not cover."""
    messages: list[CheckMessage] = []
    for name, valid, expected, id_ in _ORDER_SETTINGS:
        value = _get(f"SNOWID_ORDER_{name}")
        if not valid(value):
            messages.append(
                error(
                    f"SNOWID_ORDER_{name} is {value!r}; expected {expected}.",
                    f"django_snowid.{id_}",
                )
            )
    try:
        build_format()
    except (LayoutError, TypeError, ValueError) as exc:
        messages.append(
            error(
                "The SNOWID_ORDER_PACKING/SEQUENCE_BITS/SHARD_BITS/SEQUENCE_DIGITS/"
                f"SHARD_DIGITS/ZONE settings make no valid order-number format: {exc}",
                "django_snowid.E214",
            )
        )
    return messages


#: Every check of the settings, with its tag: ``AppConfig.ready()`` registers them.
CHECKS: tuple[tuple[Callable[..., list[CheckMessage]], str], ...] = (
    (check_epoch, Tags.compatibility),
    (check_layouts, Tags.compatibility),
    (check_worker_id, Tags.compatibility),
    (check_worker_settings, Tags.compatibility),
    (check_clock_tolerance, Tags.compatibility),
    (check_order_numbers, Tags.compatibility),
    (check_public_ids, Tags.compatibility),
    (check_app_default_auto_field, Tags.models),
    (check_order_settings, Tags.compatibility),
    (check_redis_client, Tags.compatibility),
)


def register_checks() -> None:
    for check, tag in CHECKS:
        register(check, tag)
