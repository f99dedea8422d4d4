"""Every name of Django's that is not its public, documented API and that we depend on,
each in one small function saying why; the rest of the package goes through them.
``tests/db/test_private_api.py`` holds each one to what we expect of it, so a Django
release that changes one fails there, loudly, before it fails anywhere else.

Calls (the functions below):

- ``Model._do_insert``: :func:`wrap_insert`;
- ``AppConfig._is_default_auto_field_overridden``: :func:`default_auto_field_overridden`;
- ``AdminSite._registry`` (``get_model_admin()`` is public from Django 5.0 on only):
  :func:`model_admin`;
- ``connections.create_connection()``, ``close_if_unusable_or_obsolete()``:
  :func:`new_connection`, :func:`close_if_unusable`;
- ``close_if_health_check_failed()``, ``queries_logged``, the driver connection
  ``connection.connection``, and an attribute of ours kept on the connection object:
  :func:`kept_cursor`;
- ``CursorWrapper.cursor`` (the driver's cursor, for ``lastrowid``): :func:`last_insert_id`;
- SQLite's ``is_in_memory_db()``: :func:`is_in_memory_sqlite`;
- ``connection.introspection.get_constraints()``: :func:`unique_constraints`;
- ``connection.operators``: :func:`operator_sql`.

Hooks and behaviour we rely on without calling them (they have tests there too):

- ``Field.get_pk_value_on_save()``, which ``Model._save_table()`` and
  ``QuerySet.bulk_create()`` call for a primary key without a value: the Snowflake fields
  fill the key there (``ids/fields.py``);
- ``Model._save_table()`` goes straight to INSERT, without an UPDATE first, for a new
  instance whose primary key has a default: ``SnowflakeAutoField`` has one for that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.db import connections, models

if TYPE_CHECKING:
    from django.apps import AppConfig
    from django.contrib.admin import AdminSite, ModelAdmin

__all__ = [
    "close_if_unusable",
    "default_auto_field_overridden",
    "is_in_memory_sqlite",
    "kept_cursor",
    "last_insert_id",
    "model_admin",
    "new_connection",
    "operator_sql",
    "unique_constraints",
    "wrap_insert",
]

#: The attribute of a Django connection object that keeps our cursor.
KEPT_CURSOR = "_snowid_kept_cursor"


def wrap_insert(model: type[models.Model], wrap: Callable[[Callable[..., Any]], Any]) -> None:
    """Replace ``model._do_insert(self, manager, using, fields, returning_fields, raw)``
    by ``wrap(the original)``.

    The order-number retry must wrap the INSERT of the row and nothing else, and Django
    offers no public hook there (``orders/retry.py`` says why the public ones will not
    do). Stable since Django 1.x; absent from the type stubs.
    """
    original = model._do_insert  # type: ignore[attr-defined]
    model._do_insert = wrap(original)  # type: ignore[attr-defined]


def default_auto_field_overridden(config: AppConfig) -> bool:
    """Whether ``config`` sets ``default_auto_field`` itself, which wins over
    ``DEFAULT_AUTO_FIELD`` (check W030: ``startapp`` writes one into every new app)."""
    return bool(getattr(config, "_is_default_auto_field_overridden", False))


def model_admin(site: AdminSite, model: type[models.Model]) -> ModelAdmin | None:
    """The ``ModelAdmin`` of ``model`` on ``site``, or None: the decode page links a value
    to the row that holds it only where the admin shows that row."""
    return site._registry.get(model)


def new_connection(alias: str) -> Any:
    """A new Django connection to the database ``alias``, of nobody's thread: ours, in
    autocommit whatever the caller's connection is in (``db/connections.py``)."""
    return connections.create_connection(alias)


def close_if_unusable(connection: Any) -> None:
    """What Django does to its connections between requests (errors, ``CONN_MAX_AGE``),
    for a connection of ours kept between calls."""
    connection.close_if_unusable_or_obsolete()


def kept_cursor(connection: Any) -> Any:
    """A Django cursor of ``connection`` (its execute wrappers, error translation and query
    log apply), kept on the connection object and made again when the driver connection
    or its query logging changed: making a cursor costs more than the server's work on
    the one-statement calls of ``db/returning.py`` (psycopg builds a cursor and its
    adapters each time; ``bench_sequences.py``)."""
    connection.close_if_health_check_failed()  # what connection.cursor() checks first
    connection.ensure_connection()
    kept = getattr(connection, KEPT_CURSOR, None)
    logged = connection.queries_logged
    if kept is None or kept[0] is not connection.connection or kept[1] != logged:
        kept = (connection.connection, logged, connection.cursor())
        setattr(connection, KEPT_CURSOR, kept)
    return kept[2]


def last_insert_id(cursor: Any) -> int:
    """The driver's ``lastrowid`` under Django's cursor: on MariaDB/MySQL the value of
    ``LAST_INSERT_ID(expr)`` that a statement handed back."""
    return int(cursor.cursor.lastrowid)


def is_in_memory_sqlite(connection: Any) -> bool:
    """Whether ``connection`` is an SQLite database in memory (the test runners'), which
    no other process can see."""
    return connection.vendor == "sqlite" and bool(connection.is_in_memory_db())


def unique_constraints(connection: Any, table: str, column: str) -> frozenset[str]:
    """The names of the UNIQUE constraints of exactly ``column`` of ``table``: what tells
    the constraint a failed INSERT names (the retry) apart from another's."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return frozenset(
        name for name, c in constraints.items() if c["unique"] and c["columns"] == [column]
    )


def operator_sql(connection: Any, lookup_name: str, rhs: str) -> str:
    """The SQL of the built-in lookup ``lookup_name`` (``"gte"``, ``"lt"``) with ``rhs``:
    our lookups by creation time compile to it, so the column's index serves."""
    return str(connection.operators[lookup_name] % rhs)
