"""Named sequences: customer, invoice and coupon numbers that go up by one.

``next_value(name)`` / ``next_values(name, count)`` (also importable from
``django_snowid``); declarations in ``SNOWID_SEQUENCES``; the store in
``SNOWID_SEQUENCE_BACKEND``. See the README section "Named sequences".
"""

from __future__ import annotations

from .issuer import next_value, next_values

__all__ = ["next_value", "next_values"]
