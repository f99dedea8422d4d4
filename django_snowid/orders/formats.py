"""The options of an order-number format, and their defaults from the settings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..conf import conf
from ..core.key_schedule import KeySchedule
from ..core.order_format import OrderNumberFormat

__all__ = ["FORMAT_OPTIONS", "build_format", "checked_format", "conceals"]

#: The keyword arguments of ``OrderNumberField`` that shape its format; each one left at
#: ``None`` takes the setting ``SNOWID_ORDER_<NAME>``.
FORMAT_OPTIONS: Final = (
    "packing",
    "sequence_bits",
    "shard_bits",
    "sequence_digits",
    "shard_digits",
    "zone",
    "conceal",
    "check_digit",
)


def build_format(options: Mapping[str, Any] | None = None) -> OrderNumberFormat:
    """The format of ``options``, the settings filling those left at ``None``; a
    concealing one takes its keys from ``SNOWID_ORDER_KEY``."""
    options = options or {}
    values = {
        name: value if (value := options.get(name)) is not None else conf.order_format_default(name)
        for name in FORMAT_OPTIONS
    }
    if options.get("check_digit") is None and values["packing"] != "decimal":
        values["check_digit"] = None  # the setting's default is for decimal numbers
    keys = None
    if values["conceal"] is True and conf.ORDER_KEY is not None:
        keys = order_keys()
    return OrderNumberFormat(**values, keys=keys)


def order_keys() -> KeySchedule:
    """The key schedule of ``SNOWID_ORDER_KEY`` (:class:`LayoutError` names a problem,
    never a key)."""
    return KeySchedule.parse(conf.ORDER_KEY, name="SNOWID_ORDER_KEY")


def conceals(options: Mapping[str, Any] | None = None) -> bool:
    """Whether a format of ``options`` conceals (the setting filling ``None``)."""
    option = (options or {}).get("conceal")
    return option is True or (option is None and conf.ORDER_CONCEAL is True)


def checked_format(options: Mapping[str, Any] | None = None) -> OrderNumberFormat:
    """The format of ``options`` as the checks judge it: unconcealed without a key (E215's)."""
    if conf.ORDER_KEY is None and conceals(options):
        options = {**(options or {}), "conceal": False}
    return build_format(options)
