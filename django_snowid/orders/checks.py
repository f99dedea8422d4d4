"""System checks of the order-number settings (``SNOWID_ORDER_*``); the fields check
their own format (E201-E204)."""

from __future__ import annotations

from typing import Any, get_args

from django.core.checks import CheckMessage, Tags

from .. import inventory
from ..checks import Check, error, is_number
from ..conf import WhenFull, conf
from ..exceptions import LayoutError
from ..stores.checks import store_checks
from .formats import checked_format, conceals, order_keys
from .stores import BACKENDS, ORDERS

__all__ = ["CHECKS"]


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
    messages: list[CheckMessage] = store_checks(ORDERS)
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
    (
        "BLOCK_MAX",
        lambda v: _is_int(v) and 1 <= v <= 1_000_000,
        "an integer from 1 (one number a store call) to 1000000",
        "E219",
    ),
)


def check_order_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Type and range of the order-number settings the format checks do not cover."""
    messages: list[CheckMessage] = []
    for name, valid, expected, id_ in _ORDER_SETTINGS:
        value = getattr(conf, f"ORDER_{name}")
        if not valid(value):
            messages.append(
                error(
                    f"SNOWID_ORDER_{name} is {value!r}; expected {expected}.",
                    f"django_snowid.{id_}",
                )
            )
    messages.extend(_check_key())
    try:
        checked_format()
    except (LayoutError, TypeError, ValueError) as exc:
        messages.append(
            error(
                "The SNOWID_ORDER_PACKING/SEQUENCE_BITS/SHARD_BITS/SEQUENCE_DIGITS/"
                f"SHARD_DIGITS/ZONE settings make no valid order-number format: {exc}",
                "django_snowid.E214",
            )
        )
    return messages


def _check_key() -> list[CheckMessage]:
    """E215: a key that concealing fields lack, or one that is weak or badly scheduled."""
    if conf.ORDER_KEY is None:
        concealing = [
            f"{field.model._meta.label}.{field.name}"
            for field in inventory.order_fields()
            if conceals(getattr(field, "format_options", {}))
        ]
        if not concealing:
            return []
        return [
            error(
                "Concealed order numbers need a key, and SNOWID_ORDER_KEY is not set "
                f"(fields that conceal: {', '.join(concealing)}). Set it to a random secret "
                "of at least 32 characters.",
                "django_snowid.E215",
            )
        ]
    try:
        order_keys()
    except LayoutError as exc:
        return [error(f"SNOWID_ORDER_KEY: {exc}", "django_snowid.E215")]
    return []


def check_order_table(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[CheckMessage]:
    """E220: the database store's table is missing (``check --database``; silent inside
    ``migrate``, which creates it)."""
    return store_checks(ORDERS, databases) if databases else []


#: The checks of order numbers, with their tags: ``AppConfig.ready()`` registers them.
CHECKS: tuple[Check, ...] = (
    (check_order_numbers, Tags.compatibility),
    (check_order_settings, Tags.compatibility),
    (check_order_table, Tags.database),
)
