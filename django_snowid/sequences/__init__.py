"""Named sequences: customer, invoice and coupon numbers that go up by one; an app of its
own, ``django_snowid.sequences`` in ``INSTALLED_APPS``.

``next_value(name)`` / ``next_values(name, count)``, ``last_value(name)``,
``delete(name)``, ``Sequence(name)``; declarations in
``SNOWID_SEQUENCES``; the store in ``SNOWID_SEQUENCE_BACKEND``. See the docs pages
"Named sequences" (docs/sequences.rst) and "Coming from django-sequences".
"""

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
