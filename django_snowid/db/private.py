"""Every name of Django's that is not its public, documented API and that we depend on,
one small function each (see CONTRIBUTING.md, "Project layout")."""

from __future__ import annotations

import sys
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
    "migration_recorder_model",
    "model_admin",
    "new_connection",
    "operator_sql",
    "test_environment_is_set_up",
    "unique_constraints",
    "wrap_insert",
]

#: The attribute of a Django connection object that keeps our cursor.
KEPT_CURSOR = "_snowid_kept_cursor"


def wrap_insert(model: type[models.Model], wrap: Callable[[Callable[..., Any]], Any]) -> None:
    """Replace ``model._do_insert(self, manager, using, fields, returning_fields, raw)``
    by ``wrap(the original)``."""
    original = model._do_insert  # type: ignore[attr-defined]
    model._do_insert = wrap(original)  # type: ignore[attr-defined]


def default_auto_field_overridden(config: AppConfig) -> bool:
    """Whether ``config`` sets ``default_auto_field`` itself."""
    return bool(getattr(config, "_is_default_auto_field_overridden", False))


def migration_recorder_model() -> type[models.Model]:
    """The model of ``django_migrations`` (``MigrationRecorder.Migration``): it has no app
    config, so its key follows ``DEFAULT_AUTO_FIELD``."""
    from django.db.migrations.recorder import MigrationRecorder

    return MigrationRecorder.Migration


def model_admin(site: AdminSite, model: type[models.Model]) -> ModelAdmin | None:
    """The ``ModelAdmin`` of ``model`` on ``site``, or None (``AdminSite._registry``)."""
    return site._registry.get(model)


def new_connection(alias: str) -> Any:
    """A new Django connection to the database ``alias``, of nobody's thread."""
    return connections.create_connection(alias)


def close_if_unusable(connection: Any) -> None:
    """What Django does to its connections between requests, for one of ours (no request's:
    ``CONN_MAX_AGE = 0`` keeps it, checked before each use as by ``CONN_HEALTH_CHECKS``)."""
    if not connection.settings_dict["CONN_MAX_AGE"]:
        connection.close_at = None
        connection.health_check_enabled = True
    connection.close_if_unusable_or_obsolete()


def kept_cursor(connection: Any) -> Any:
    """A Django cursor of ``connection``, kept on the connection object and made again
    when the driver connection or its query logging changed."""
    connection.close_if_health_check_failed()  # what connection.cursor() checks first
    connection.ensure_connection()
    kept = getattr(connection, KEPT_CURSOR, None)
    logged = connection.queries_logged
    if kept is None or kept[0] is not connection.connection or kept[1] != logged:
        kept = (connection.connection, logged, connection.cursor())
        setattr(connection, KEPT_CURSOR, kept)
    return kept[2]


def last_insert_id(cursor: Any) -> int:
    """The driver's ``lastrowid`` under Django's cursor."""
    return int(cursor.cursor.lastrowid)


def is_in_memory_sqlite(connection: Any) -> bool:
    """Whether ``connection`` is an SQLite database in memory."""
    return connection.vendor == "sqlite" and bool(connection.is_in_memory_db())


def unique_constraints(connection: Any, table: str, column: str) -> frozenset[str]:
    """The names of the UNIQUE constraints of exactly ``column`` of ``table``."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return frozenset(
        name for name, c in constraints.items() if c["unique"] and c["columns"] == [column]
    )


def operator_sql(connection: Any, lookup_name: str, rhs: str) -> str:
    """The SQL of the built-in lookup ``lookup_name`` (``"gte"``, ``"lt"``) with ``rhs``."""
    return str(connection.operators[lookup_name] % rhs)


def test_environment_is_set_up() -> bool:
    """Whether ``setup_test_environment()`` ran (and no teardown): ``_TestState.saved_data``."""
    utils = sys.modules.get("django.test.utils")
    return utils is not None and hasattr(utils._TestState, "saved_data")
