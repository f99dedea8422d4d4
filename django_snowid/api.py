"""The public functions: issue and decode ids with the layouts of the settings."""

from __future__ import annotations

from .core.layout import DecodedId, Layout
from .ids.issuer import get_generator, get_layout


def next_id(*, layout: str | None = None) -> int:
    """A new id from this process's generator for ``layout`` (default: ``SNOWID_LAYOUT``)."""
    return get_generator(layout).next_id()


def next_ids(count: int, *, layout: str | None = None) -> list[int]:
    """``count`` new increasing ids in one call (what ``bulk_create`` wants)."""
    return get_generator(layout).next_ids(count)


def decode(value: int | str, *, layout: str | Layout | None = None) -> DecodedId:
    """Take an id apart: time (aware UTC), named node parts and sequence.

    ``layout`` is a name from the settings (default ``SNOWID_LAYOUT``) or a
    :class:`~django_snowid.core.Layout`. Raises :class:`~django_snowid.exceptions.InvalidId`
    (a ``ValueError``) naming the value and the valid range for anything that is not
    an id of that layout.
    """
    return get_layout(layout).decode(value)
