"""Where named sequences live: the database alone, or Redis under a database mark (the
``SEQUENCES`` family)."""

from __future__ import annotations

from typing import Any

from django.apps import apps

from ...conf import SnowidSettings
from ...exceptions import InvalidSequence, SequenceError, SequenceUnavailable
from ...stores import Family, FamilyChecks, StoreErrors
from ...stores import get_store as _get_store

__all__ = ["SEQUENCES", "get_store"]

SEQUENCES = Family(
    label="named-sequence store",
    setting=SnowidSettings.SEQUENCE_BACKEND,
    choices={
        "database": "django_snowid.sequences.stores.database.DatabaseSequenceStore",
        "redis": "django_snowid.sequences.stores.redis.RedisSequenceStore.configured",
    },
    errors=StoreErrors(
        SequenceUnavailable,
        SequenceError,
        unreachable="Redis ({where}) is unreachable: {error}. Nothing was issued.",
        bad_key="Redis refused the sequence key {key!r}: {error}",
        invalid=InvalidSequence,
    ),
    checks=FamilyChecks(unknown="django_snowid.E300"),
    in_use=lambda: apps.is_installed("django_snowid.sequences"),
)


def get_store() -> Any:
    """The store ``SNOWID_SEQUENCE_BACKEND`` names, kept until a setting changes."""
    return _get_store(SEQUENCES)
