"""Our tables when they are missing: a store refuses, naming ``migrate``, and never falls
back to anything private to one process."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from django.db import connections, router
from django.db.migrations.operations import CreateModel

__all__ = [
    "CreateModelIfMissing",
    "inside_migrate",
    "missing_message",
    "missing_tables",
]


def missing_message(table: str, alias: str, consequence: str) -> str:
    return (
        f"The table {table} is missing from the database {alias!r}: {consequence}. The code "
        "runs before `manage.py migrate` created it, or the table was dropped. Run "
        "`manage.py migrate`."
    )


def missing_tables(alias: str, models: Iterable[Any]) -> list[str]:
    """The tables of ``models`` that the database ``alias`` lacks (those it may hold)."""
    wanted = [m._meta.db_table for m in models if router.allow_migrate_model(alias, m)]
    if not wanted:
        return []
    connection = connections[alias]
    with connection.cursor() as cursor:
        present = set(connection.introspection.table_names(cursor))
    return [table for table in wanted if table not in present]


def inside_migrate() -> bool:
    """Whether the caller runs inside Django's ``migrate`` command (or a subclass)."""
    from django.core.management.commands.migrate import Command

    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name in ("execute", "handle", "check") and isinstance(
            frame.f_locals.get("self"), Command
        ):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


class CreateModelIfMissing(CreateModel):
    """``CreateModel`` that leaves a table a ``pre_migrate`` receiver created alone."""

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = to_state.apps.get_model(app_label, self.name)
        connection = schema_editor.connection
        with connection.cursor() as cursor:
            if model._meta.db_table in connection.introspection.table_names(cursor):
                return
        super().database_forwards(app_label, schema_editor, from_state, to_state)

    def describe(self) -> str:
        return f"Create model {self.name} (unless its table exists)"
