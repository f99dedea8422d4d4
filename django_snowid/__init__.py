"""Snowflake primary keys and order numbers for Django."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["decode", "next_id", "next_ids"]

if TYPE_CHECKING:
    from .ids.issuer import decode, next_id, next_ids


def __getattr__(name: str) -> Any:
    # Imported lazily: ``import django_snowid`` must work before settings are configured.
    if name in __all__:
        from .ids import issuer

        return getattr(issuer, name)
    raise AttributeError(f"module 'django_snowid' has no attribute {name!r}")
