"""What a database error means, read from the error alone (no query: the caller's
transaction may be aborted)."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["is_contention", "is_lock_refusal", "is_lock_timeout", "is_missing_table", "sqlstate"]

# SQLSTATEs: serialization failure, deadlock, lock not available; MariaDB: lock wait
# timeout, deadlock; NOWAIT refused (MariaDB, MySQL 8); no such table.
_CONTENTION_SQLSTATES: Final = frozenset({"40001", "40P01", "55P03"})
_CONTENTION_ERRNOS: Final = frozenset({1205, 1213})
_NOWAIT_ERRNOS: Final = frozenset({1205, 3572})
_UNDEFINED_TABLE: Final = "42P01"
_LOCK_NOT_AVAILABLE: Final = "55P03"
_NO_SUCH_TABLE: Final = 1146


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a PostgreSQL error under ``exc``: psycopg 3's ``sqlstate`` or
    psycopg2's ``pgcode``."""
    cause = exc.__cause__ or exc
    code = getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)
    return str(code) if code else None


def is_lock_timeout(exc: BaseException) -> bool:
    """PostgreSQL refused a lock (``lock_timeout`` ran out, or ``NOWAIT``)."""
    return sqlstate(exc) == _LOCK_NOT_AVAILABLE


def is_contention(exc: BaseException) -> bool:
    """A deadlock, a lock timeout or a serialization failure: the server is reachable,
    the transaction lost a race and may be run again."""
    cause = exc.__cause__ or exc
    if sqlstate(exc) in _CONTENTION_SQLSTATES:
        return True
    args = getattr(cause, "args", ())
    if args and args[0] in _CONTENTION_ERRNOS:
        return True
    return "database is locked" in str(exc)  # SQLite's busy timeout ran out


def is_lock_refusal(connection: Any, exc: BaseException) -> bool:
    """A lock asked for with NOWAIT (SQLite: a write with no busy timeout) was refused."""
    if connection.vendor == "postgresql":
        return is_lock_timeout(exc)
    if connection.vendor == "mysql":
        return bool(exc.args) and exc.args[0] in _NOWAIT_ERRNOS
    return "locked" in str(exc)  # SQLite: "database is locked"


def is_missing_table(exc: BaseException) -> bool:
    """Whether the database raised ``exc`` because a table does not exist."""
    cause = exc.__cause__ or exc
    if sqlstate(exc) == _UNDEFINED_TABLE:
        return True
    args = getattr(cause, "args", ())
    if args and args[0] == _NO_SUCH_TABLE:
        return True
    return "no such table" in str(exc)  # SQLite
