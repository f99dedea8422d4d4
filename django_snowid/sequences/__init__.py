"""Named sequences: customer, invoice and coupon numbers that go up by one; an app of its
own, ``django_snowid.sequences`` in ``INSTALLED_APPS``.

``next_value(name)`` / ``next_values(name, count)``; declarations in
``SNOWID_SEQUENCES``; the store in ``SNOWID_SEQUENCE_BACKEND``. See the docs page
"Named sequences" (docs/sequences.rst).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["next_value", "next_values"]

if TYPE_CHECKING:
    from .issuer import next_value, next_values


def __getattr__(name: str) -> Any:
    # Imported lazily: INSTALLED_APPS imports this package before the models are ready.
    if name in __all__:
        from . import issuer

        return getattr(issuer, name)
    raise AttributeError(f"module 'django_snowid.sequences' has no attribute {name!r}")
