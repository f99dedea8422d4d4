"""Snowflake primary keys and order numbers for Django."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["decode", "next_id", "next_ids", "next_value", "next_values"]

if TYPE_CHECKING:
    from .ids.issuer import decode, next_id, next_ids
    from .sequences.issuer import next_value, next_values

_SEQUENCES = frozenset({"next_value", "next_values"})


def __getattr__(name: str) -> Any:
    # Imported lazily: ``import django_snowid`` must work before settings are configured.
    if name in _SEQUENCES:
        from .sequences import issuer as sequences_api

        return getattr(sequences_api, name)
    if name in __all__:
        from .ids import issuer

        return getattr(issuer, name)
    raise AttributeError(f"module 'django_snowid' has no attribute {name!r}")
