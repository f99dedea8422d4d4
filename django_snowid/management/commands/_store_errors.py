"""What reading a store may raise besides our own errors (not a command: the leading
underscore hides it from ``manage.py``)."""

from __future__ import annotations

from django.db import DatabaseError


def store_errors() -> tuple[type[BaseException], ...]:
    """A server that is down, a key of the wrong type (WRONGTYPE), a record that does not
    parse: the commands turn these into a ``CommandError`` naming the store."""
    errors: tuple[type[BaseException], ...] = (DatabaseError, ValueError, OSError)
    try:
        from redis.exceptions import RedisError
    except ImportError:  # django-redis is optional
        return errors
    return (*errors, RedisError)
