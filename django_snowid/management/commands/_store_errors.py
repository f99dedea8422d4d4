"""Store and database errors as the commands report them (no command: a leading ``_``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.core.management.base import CommandError
from django.db import DatabaseError

from ...db.errors import is_missing_table


def store_errors() -> tuple[type[BaseException], ...]:
    """A server that is down, a key of the wrong type (WRONGTYPE), a record that does not
    parse: the commands turn these into a ``CommandError`` naming the store."""
    errors: tuple[type[BaseException], ...] = (DatabaseError, ValueError, OSError)
    try:
        from redis.exceptions import RedisError
    except ImportError:  # django-redis is optional
        return errors
    return (*errors, RedisError)


def database_failure(exc: DatabaseError, aliases: Iterable[str]) -> str:
    """A database error met reading ``aliases``: a table not migrated yet, or a database down."""
    names = " or ".join(repr(alias) for alias in dict.fromkeys(aliases)) or "of the rows"
    error = " ".join(f"{type(exc).__name__}: {exc}".split())
    if is_missing_table(exc):
        return f"A table is missing from the database {names} ({error}): run `manage.py migrate`."
    return f"The database {names} could not be read: {error}"


@contextmanager
def reading(aliases: Iterable[str]) -> Iterator[None]:
    """Turn a database error inside the block into a ``CommandError`` naming ``aliases``."""
    try:
        yield
    except DatabaseError as exc:
        raise CommandError(database_failure(exc, aliases)) from None
