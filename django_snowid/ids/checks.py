"""System checks of Snowflake ids (the fields check their own options)."""

from __future__ import annotations

import numbers
from datetime import datetime, timedelta, timezone
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.checks import CheckMessage, Tags
from django.utils.module_loading import import_string

from ..checks import Check, configured_layouts, error, project_app, warning
from ..conf import conf
from ..core.layout import parse_epoch
from ..db.private import default_auto_field_overridden
from ..exceptions import LayoutError
from .fields import SnowflakeAutoField

__all__ = ["CHECKS"]

EXHAUSTION_WARNING = timedelta(days=3653)  # ten years
#: The alphabets the documentation shows: copied, they are as public as sqids' default.
DOCS_ALPHABETS = frozenset({"9naHVckpbdZRjSx2hvDwrzqQo8MuLtATs6FKU4CYl5J3ImyEB70OiGNXeW1Pgf"})
NEW_ALPHABET = (
    'python -c "from django_snowid.ids.publicids import new_alphabet; print(new_alphabet())"'
)


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
    problem = _sqids_refusal(Sqids, alphabet, min_length)
    if problem:
        return [
            error(
                f"SNOWID_PUBLIC_ID_ALPHABET={alphabet!r} / SNOWID_PUBLIC_ID_MIN_LENGTH="
                f"{min_length!r}: {problem}.",
                "django_snowid.E401",
            )
        ]
    if alphabet == DEFAULT_ALPHABET or alphabet in DOCS_ALPHABETS:
        whose = "sqids' default" if alphabet == DEFAULT_ALPHABET else "django-snowid's docs'"
        return [
            warning(
                f"SNOWID_PUBLIC_ID_ALPHABET is {whose} alphabet: anyone who reads it decodes "
                f"your public ids. Make one for this project: {NEW_ALPHABET}",
                "django_snowid.W400",
            )
        ]
    return []


def _sqids_refusal(sqids: Any, alphabet: object, min_length: object) -> str:
    """Why sqids refuses ``alphabet`` and ``min_length`` (``""``: it takes them)."""
    if not isinstance(alphabet, str) or isinstance(min_length, bool):
        return "the alphabet must be a string and the minimum length an integer"
    try:
        sqids(alphabet=alphabet, min_length=min_length)
    except (TypeError, ValueError) as exc:
        return str(exc)
    return ""


def check_app_default_auto_field(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Apps whose ``default_auto_field`` silently wins over a ``DEFAULT_AUTO_FIELD`` of ours."""

    try:
        ours = issubclass(import_string(settings.DEFAULT_AUTO_FIELD), SnowflakeAutoField)
    except (ImportError, TypeError, AttributeError):  # Django's own check reports it
        return []
    if not ours:
        return []
    warnings: list[CheckMessage] = []
    for config in app_configs or apps.get_app_configs():
        if not (default_auto_field_overridden(config) and project_app(config)):
            continue
        losers = [
            model.__name__
            for model in config.get_models()
            if model._meta.pk is not None
            and model._meta.pk.auto_created
            and not isinstance(model._meta.pk, SnowflakeAutoField)
        ]
        if losers:
            names = ", ".join(sorted(losers))
            whose = f"its model {names} gets" if len(losers) == 1 else f"its models {names} get"
            warnings.append(
                warning(
                    f"App {config.label!r} sets default_auto_field = "
                    f"{config.default_auto_field!r} in its AppConfig, which overrides "
                    f"DEFAULT_AUTO_FIELD ({settings.DEFAULT_AUTO_FIELD}): "
                    f"{whose} no Snowflake primary key. Remove that "
                    "line from its apps.py (startapp writes it) to use DEFAULT_AUTO_FIELD.",
                    "django_snowid.W030",
                )
            )
    return warnings


#: The checks of Snowflake ids, with their tags: ``AppConfig.ready()`` registers them.
CHECKS: tuple[Check, ...] = (
    (check_epoch, Tags.compatibility),
    (check_layouts, Tags.compatibility),
    (check_clock_tolerance, Tags.compatibility),
    (check_public_ids, Tags.compatibility),
    (check_app_default_auto_field, Tags.models),
)
