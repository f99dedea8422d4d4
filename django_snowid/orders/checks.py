"""System checks of the order-number settings (``SNOWID_ORDER_*``) and of concealed
streams' keys; the fields check their own format (E201-E204)."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any, get_args

from django.core.checks import CheckMessage, Tags
from django.db import DatabaseError

from .. import inventory
from ..checks import DEPLOY, Check, error, is_number, warning
from ..conf import WhenFull, conf
from ..core.layout import iso_utc
from ..core.order_format import OrderNumberFormat
from ..core.order_keys import KeyConflict, KeyRecord, agree
from ..exceptions import LayoutError, SnowidError
from ..stores.checks import store_checks
from .formats import checked_format, conceals, order_keys
from .keys import StreamKeys
from .stores import BACKENDS, ORDERS, get_store

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


KEY_NOTICE_S = 3600


def check_key_notice(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """W230: a key of ``SNOWID_ORDER_KEY`` becomes valid within :data:`KEY_NOTICE_S`."""
    if conf.ORDER_KEY is None or not _concealed_streams():
        return []
    try:
        keys = order_keys()
    except LayoutError:
        return []  # E215 says it
    now = time.time()
    soon = [start for start in keys.starts if now <= start < now + KEY_NOTICE_S]
    if not soon:
        return []
    when = iso_utc(datetime.fromtimestamp(soon[0], timezone.utc), milliseconds=False)
    return [
        warning(
            f"SNOWID_ORDER_KEY: a key becomes valid at {when}, in less than an hour. Every "
            "process must run with this schedule before then: processes started later (a "
            "deploy still rolling out) are refused with OrderKeyConflict, or refuse the "
            "others. Give it a valid_from after the end of the deploy.",
            "django_snowid.W230",
        )
    ]


def check_key_records(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """E230, W231 (``check --deploy``): each concealed stream's key record against this
    process's schedule (silent when the store cannot be read)."""
    messages: list[CheckMessage] = []
    for stream, fmt in _concealed_streams().items():
        try:
            store = get_store()
            record, position = store.keys(stream), store.read(stream)
        except (SnowidError, DatabaseError):
            return []
        if record is not None and position is not None:
            messages += _against_record(stream, fmt, record, position[0])
    return messages


def _against_record(
    stream: str, fmt: OrderNumberFormat, record: KeyRecord, last_second: int
) -> list[CheckMessage]:
    now = time.time()
    second = max(int(now) + fmt.utc_offset_at(now), last_second)
    window = fmt.key_window(second)
    assert window is not None  # a concealing format's
    agreed = agree(record, last_second, second, window)
    if isinstance(agreed, KeyConflict):
        keys = StreamKeys(stream, fmt)
        keys.window = window
        return [error(f"{keys.refusal(agreed)} (now)", "django_snowid.E230")]
    if record.next_id and record.next_id != window.next_id and second < record.next_from:
        when = iso_utc(fmt.time_of_local_second(record.next_from), milliseconds=False)
        return [
            warning(
                f"Stream {stream!r} announces key {record.next_id} from {when} on, which this "
                "process's SNOWID_ORDER_KEY does not start then: from that second on this "
                "process is refused (OrderKeyConflict). Deploy the schedule of the other "
                "processes here too before then.",
                "django_snowid.W231",
            )
        ]
    return []


def _concealed_streams() -> dict[str, OrderNumberFormat]:
    """The streams whose fields conceal their sequences, with their format."""
    found: dict[str, OrderNumberFormat] = {}
    for field in inventory.order_fields():
        try:
            fmt = field.format
        except LayoutError:
            continue  # E202, E215 say it
        if fmt.cipher is not None:
            found.setdefault(field.stream, fmt)
    return found


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
    (check_key_notice, Tags.compatibility),
    (check_key_records, DEPLOY),
    (check_order_table, Tags.database),
)
