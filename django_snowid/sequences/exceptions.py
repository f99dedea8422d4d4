"""Exceptions of named sequences; all derive from :class:`django_snowid.exceptions.SnowidError`."""

from __future__ import annotations

from ..exceptions import SnowidError


class SequenceError(SnowidError):
    """A value of a named sequence could not be issued."""


class UnknownSequence(SequenceError, LookupError):
    """The name is not declared in ``SNOWID_SEQUENCES`` and ``SNOWID_SEQUENCES_UNKNOWN`` is
    ``"refuse"``."""


class InvalidSequence(SequenceError, ValueError):
    """A name, a count or a declaration is not valid."""


class SequenceUnavailable(SequenceError):
    """The store that must act is unreachable: Redis, or the database once Redis has no
    headroom left. Nothing was issued."""
