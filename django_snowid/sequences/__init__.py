"""Named sequences: customer, invoice and coupon numbers that go up by one (docs "Named
sequences")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Sequence", "delete", "last_value", "next_value", "next_values"]

if TYPE_CHECKING:
    from .issuer import Sequence, delete, last_value, next_value, next_values


def __getattr__(name: str) -> Any:
    # Imported lazily: INSTALLED_APPS imports this package before the models are ready.
    if name in __all__:
        from . import issuer

        return getattr(issuer, name)
    raise AttributeError(f"module 'django_snowid.sequences' has no attribute {name!r}")
