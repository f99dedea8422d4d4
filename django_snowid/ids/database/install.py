"""Installing the database default's SQL in each PostgreSQL database whose models ask for
it: ``pre_migrate``, before any column's default calls it, and ``post_migrate``, which
also records each database's node value."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import connections, models, router, transaction

from ... import inventory
from ...conf import conf
from ...core.layout import Layout
from ...exceptions import LayoutError
from ...workers.pool import pool_name
from .default import SnowflakeDefault
from .geometry import Geometry
from .postgresql import install_statements
from .reservation import database_index, database_node, record

__all__ = ["database_fields", "install", "post_migrate", "pre_migrate", "wanted"]


def database_fields(alias: str | None = None) -> list[models.Field]:
    """The installed fields with ``database_ids=True`` (whose model ``alias`` holds)."""
    found = []
    for field in inventory.fields("snowflake"):
        if not getattr(field, "database_ids", False):
            continue
        if alias is not None and not router.allow_migrate_model(alias, field.model):
            continue
        found.append(field)
    return found


def _layout_of(field: models.Field) -> Layout | None:
    try:
        return field.layout  # type: ignore[attr-defined]
    except LayoutError:
        return None


def _default_of(field: Any) -> SnowflakeDefault | None:
    value = getattr(field, "db_default", None)
    return value if isinstance(value, SnowflakeDefault) else None


def _planned_geometries(plan: Iterable[tuple[Any, bool]] | None) -> list[Geometry]:
    """The geometries that the fields created or altered by ``plan`` call."""
    found = []
    for migration, _backwards in plan or ():
        for operation in migration.operations:
            fields = [field for _name, field in getattr(operation, "fields", ())]
            fields.append(getattr(operation, "field", None))
            for field in fields:
                default = _default_of(field)
                if default is not None:
                    found.append(default.geometry)
    return found


def wanted(alias: str, plan: Iterable[tuple[Any, bool]] | None = None) -> dict[Geometry, int]:
    """The geometries ``alias`` needs a function of, and the node value of each."""
    nodes: dict[Geometry, int] = {}
    by_pool: dict[str, int] = {}
    for field in database_fields(alias):
        layout = _layout_of(field)
        default = _default_of(field)
        if layout is None or default is None:
            continue
        node = database_node(layout, alias)
        nodes[default.geometry] = node
        by_pool[pool_name(layout)] = node
    for geometry in _planned_geometries(plan):
        if geometry in nodes:
            continue
        # An older geometry (a migration made before the layout changed): its pool's
        # database node if a layout of the settings shares that pool, else the top one.
        layout = geometry.layout
        index = database_index(alias)
        nodes[geometry] = by_pool.get(pool_name(layout), layout.max_node - index)
    return nodes


def install(alias: str, plan: Iterable[tuple[Any, bool]] | None = None) -> list[Geometry]:
    """Install every geometry ``alias`` needs (PostgreSQL only); the geometries installed."""

    connection = connections[alias]
    if connection.vendor != "postgresql":
        return []
    nodes = wanted(alias, plan)
    if not nodes:
        return []
    tolerance = float(conf.CLOCK_BACKWARDS_TOLERANCE_MS)
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        cursor.execute("SELECT quote_ident(current_schema())")
        (schema,) = cursor.fetchone()
        for geometry, node in nodes.items():
            for statement in install_statements(
                geometry, schema=schema, node=node, tolerance_ms=tolerance
            ):
                cursor.execute(statement)
    return list(nodes)


def record_all(alias: str) -> None:
    """Record ``alias``'s node value of each layout its fields use (post_migrate)."""
    if connections[alias].vendor != "postgresql":
        return
    done = set()
    for field in database_fields(alias):
        layout = _layout_of(field)
        if layout is not None and pool_name(layout) not in done and record(layout, alias):
            done.add(pool_name(layout))


def pre_migrate(*, using: str, plan: Any = None, **kwargs: Any) -> None:
    install(using, plan)


def post_migrate(*, using: str, plan: Any = None, **kwargs: Any) -> None:
    install(using, plan)
    record_all(using)
