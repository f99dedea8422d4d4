"""The way back: a primary key returned to ``AutoField`` or ``BigAutoField`` gets its
identity above the largest id (PostgreSQL's would start at 1)."""

from __future__ import annotations

from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.operations import AlterField

__all__ = ["AUTO_TYPES", "post_migrate", "resume_identity"]

AUTO_TYPES = frozenset({"AutoField", "BigAutoField", "SmallAutoField"})


def resume_identity(connection: Any, table: str, column: str) -> int | None:
    """Move ``table.column``'s sequence above its largest value; that value, or None."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [table, column])
        (sequence,) = cursor.fetchone()
        if sequence is None:
            return None
        quote = connection.ops.quote_name
        cursor.execute(
            f"SELECT MAX({quote(column)}), pg_sequence_last_value(%s::regclass) "
            f"FROM {quote(table)}",
            [sequence],
        )
        largest, last = cursor.fetchone()
        if largest is None or (last is not None and last >= largest):
            return last
        cursor.execute("SELECT setval(%s::regclass, %s)", [sequence, largest])
        return int(largest)


def post_migrate(
    sender: Any, *, plan: Any = None, apps: Any = None, using: str = DEFAULT_DB_ALIAS, **kwargs: Any
) -> None:
    """After ``migrate``: primary keys altered to auto fields continue above their largest id."""

    connection = connections[using]
    if connection.vendor != "postgresql" or not plan or apps is None:
        return
    done: set[tuple[str, str]] = set()
    for migration, _backwards in plan:
        for operation in migration.operations:
            if not isinstance(operation, AlterField):
                continue
            try:
                model = apps.get_model(migration.app_label, operation.model_name)
            except LookupError:
                continue  # deleted later in the plan
            pk = model._meta.pk
            if pk.name != operation.name or pk.get_internal_type() not in AUTO_TYPES:
                continue
            key = (model._meta.db_table, pk.column)
            if key not in done:
                done.add(key)
                resume_identity(connection, *key)
