"""Superseded by :mod:`django_snowid.inventory`; only ``column_max`` is left, for the
order-number issuer, which moves to it next."""

from __future__ import annotations

from .inventory import column_max

__all__ = ["column_max"]
