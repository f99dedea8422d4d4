"""The options of an order-number format, and their defaults from the settings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..conf import conf
from ..core.order_format import OrderNumberFormat

__all__ = ["FORMAT_OPTIONS", "build_format"]

#: The keyword arguments of ``OrderNumberField`` that shape its format; each one left at
#: ``None`` takes the setting ``SNOWID_ORDER_<NAME>``.
FORMAT_OPTIONS: Final = (
    "packing",
    "sequence_bits",
    "shard_bits",
    "sequence_digits",
    "shard_digits",
    "zone",
)


def build_format(options: Mapping[str, Any] | None = None) -> OrderNumberFormat:
    """The format of ``options``, the settings filling those left at ``None``."""
    options = options or {}
    return OrderNumberFormat(
        **{
            name: value
            if (value := options.get(name)) is not None
            else conf.order_format_default(name)
            for name in FORMAT_OPTIONS
        }
    )
