"""System checks of database ids (``database_ids=True``): E600-E607, W600."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import django
from django.core.checks import CheckMessage, Error, Tags, Warning
from django.db import DatabaseError, connections, models, router
from django.db.migrations.executor import MigrationExecutor

from ...checks import HINT, Check, error, is_number
from ...conf import conf
from ...core.layout import Layout
from ...exceptions import LayoutError, WorkerIdError
from ...workers.pool import pool_for, pool_name
from ...workers.sources import LEASE_SOURCES, resolve_worker_id, worker_node
from .install import database_fields
from .reservation import postgresql_databases
from .status import missing

__all__ = ["CHECKS", "field_messages"]

WHY_NOT = {
    "sqlite": (
        "django_snowid.E601",
        "SQLite has no sequences and cannot call our function from a column default; ids "
        "there are made in Python only.",
    ),
    "mysql": (
        "django_snowid.E602",
        "MariaDB/MySQL cannot make such ids safely: a DEFAULT expression may not read a "
        "sequence and return it, and a BEFORE INSERT trigger would need a lock shared by "
        "every writer to move to a new tick, which triggers cannot take without "
        "serialising all inserts (see the docs' 'MariaDB and SQLite').",
    ),
}


def _field_error(field: models.Field, msg: str, id_: str, hint: str = "") -> Error:
    return Error(msg, hint=f"{hint}{HINT.format(id=id_)}", obj=field, id=id_)


def _aliases_of(field: models.Field) -> list[str]:
    return [alias for alias in connections if router.allow_migrate_model(alias, field.model)]


def check_database_fields(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    return field_messages(database_fields())


def field_messages(fields: Iterable[models.Field]) -> list[CheckMessage]:
    """E600 (Django 4.2), E601 (SQLite), E602 (MariaDB/MySQL), E603 (another backend),
    E607 (with ``shard_from``)."""
    messages: list[CheckMessage] = []
    for field in fields:
        refused = _option_refused(field)
        messages += [refused] if refused else _backends_refused(field)
    return messages


def _option_refused(field: models.Field) -> Error | None:
    """E607, E600: no database can give ``field`` a default."""
    if getattr(field, "shard_from", None) is not None:
        return _field_error(
            field,
            f"database_ids=True with shard_from={field.shard_from!r}: the database "  # type: ignore[attr-defined]
            "cannot read the shard source of a row it fills, and its ids would all "
            "carry shard 0.",
            "django_snowid.E607",
            "Remove one of the two options. ",
        )
    if django.VERSION < (5, 0):
        return _field_error(
            field,
            "database_ids=True needs Django 5.0 or later (the column default is a "
            f"db_default); this is Django {django.get_version()}.",
            "django_snowid.E600",
            "Upgrade Django, or remove database_ids=True. ",
        )
    return None


def _backends_refused(field: models.Field) -> list[CheckMessage]:
    """E601-E603: the databases of ``field`` that are not PostgreSQL."""
    messages: list[CheckMessage] = []
    for alias in _aliases_of(field):
        vendor = connections[alias].vendor
        if vendor == "postgresql":
            continue
        id_, why = WHY_NOT.get(
            vendor,
            ("django_snowid.E603", f"The {vendor} backend has no database default of ours."),
        )
        messages.append(
            _field_error(
                field,
                f"database_ids=True on the database {alias!r} ({vendor}): {why}",
                id_,
                "Remove database_ids=True, or route the model to PostgreSQL. ",
            )
        )
    return messages


def check_database_nodes(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """E604 (SNOWID_DATABASE_NODES), E605 (too many databases), E606 (a fixed worker id
    among the reserved values)."""
    fields = database_fields()
    nodes = conf.DATABASE_NODES
    if not is_number(nodes, least=1) or not isinstance(nodes, int):
        return [
            error(
                f"SNOWID_DATABASE_NODES is {nodes!r}; expected an integer >= 1.",
                "django_snowid.E604",
            )
        ]
    if not fields:
        return []
    messages = _too_many_databases(fields, nodes)
    seen: set[str] = set()
    for field in fields:
        try:
            layout = field.layout  # type: ignore[attr-defined]
        except LayoutError:
            continue
        if pool_name(layout) not in seen:
            seen.add(pool_name(layout))
            messages += _pool_messages(layout)
    return messages


def _too_many_databases(fields: list[models.Field], nodes: int) -> list[CheckMessage]:
    databases = [a for a in postgresql_databases() if any(a in _aliases_of(f) for f in fields)]
    if len(databases) <= nodes:
        return []
    return [
        error(
            f"{len(databases)} PostgreSQL databases ({', '.join(databases)}) hold models with "
            f"database_ids=True, but SNOWID_DATABASE_NODES reserves {nodes} node values: "
            "each database needs its own.",
            "django_snowid.E605",
        )
    ]


def _pool_messages(layout: Layout) -> list[CheckMessage]:
    """E604 (the pool of ``layout``), E606 (this process's node among its reserved values)."""
    try:
        pool = pool_for(layout, conf.WORKER_ID)
    except (WorkerIdError, LayoutError) as exc:
        return [error(f"Layout {layout.name!r}: {exc}", "django_snowid.E604")]
    if conf.WORKER_ID_SOURCE in LEASE_SOURCES:
        return []  # leased ids never reach the reserved values
    try:
        node = worker_node(layout, resolve_worker_id())
    except (WorkerIdError, LayoutError):
        return []  # E004/E006 say why
    if node not in pool.database_nodes():
        return []
    return [
        error(
            f"The worker id gives node value {node} in layout {layout.name!r}, one of "
            f"the values reserved for databases ({pool.database_nodes()}, "
            "SNOWID_DATABASE_NODES): this process's ids and a database's could collide.",
            "django_snowid.E606",
        )
    ]


def check_database_defaults(
    app_configs: Any = None, databases: Iterable[str] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """W600: columns whose database default is missing or stale (migrated apps only)."""

    messages: list[CheckMessage] = []
    for alias in databases or ():
        rows = missing(alias)
        pending = _apps_with_pending_migrations(alias) if rows else set()
        for row in rows:
            if row["field"].split(".", 1)[0] in pending:
                continue
            messages.append(
                Warning(
                    f"{row['field']} on the database {alias!r}: the column {row['table']}."
                    f"{row['column']} should default to {row['function']}() and its state is "
                    f"{row['state']!r} (default: {row['default'] or 'none'}).",
                    hint="Run `manage.py migrate` (a changed layout: makemigrations first), or "
                    "`manage.py snowid_database_ids install`. "
                    + HINT.format(id="django_snowid.W600"),
                    id="django_snowid.W600",
                )
            )
    return messages


def _apps_with_pending_migrations(alias: str) -> set[str]:
    """The labels of the apps with migrations not applied yet on the database ``alias``."""
    try:
        executor = MigrationExecutor(connections[alias])
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError:
        return set()
    return {migration.app_label for migration, _ in plan}


CHECKS: tuple[Check, ...] = (
    (check_database_fields, Tags.models),
    (check_database_nodes, Tags.compatibility),
    (check_database_defaults, Tags.database),
)
