"""The migrations a switch writes (one per app, as ``makemigrations`` would), and their
record as applied once ``snowid_adopt`` did their work online."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from django.db import connections, migrations
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.db.migrations.writer import MigrationWriter

from .facts import Change
from .operations import AdoptSnowflakeIds

__all__ = ["record_applied", "remove_unapplied", "write_migrations"]

JOURNAL = ("django_snowid", "0003_idadoption")


def write_migrations(changes: list[Change], names: tuple[str, ...], *, using: str) -> list[Path]:
    """Write ``names`` (``app_label.name``), holding ``changes``; a file already there
    (written by a run that stopped) is kept."""
    loader = MigrationLoader(connections[using], ignore_no_migrations=True)
    written = []
    for full in names:
        app_label, name = full.split(".", 1)
        if (app_label, name) in loader.disk_migrations:
            continue  # written by the run that stopped
        parents = loader.graph.leaf_nodes(app_label)
        operations: list[Any] = []
        for change in (c for c in changes if c.app_label == app_label):
            kind = AdoptSnowflakeIds if change.adopt else migrations.AlterField
            field: Any = change.field
            operations.append(
                kind(model_name=change.model_name, name=change.name, field=field.clone())
            )
        migration = type(
            "Migration",
            (migrations.Migration,),
            {"dependencies": [*parents, JOURNAL], "operations": operations},
        )(name, app_label)
        writer = MigrationWriter(migration)
        path = Path(writer.path)
        path.write_text(writer.as_string())
        written.append(path)
    importlib.invalidate_caches()
    return written


def record_applied(names: tuple[str, ...], *, using: str) -> None:
    recorder = MigrationRecorder(connections[using])
    applied = recorder.applied_migrations()
    for full in names:
        app_label, name = full.split(".", 1)
        if (app_label, name) not in applied:
            recorder.record_applied(app_label, name)


def remove_unapplied(names: tuple[str, ...], *, using: str) -> list[str]:
    """Delete the files of ``names`` not applied yet (an undone switch)."""
    loader = MigrationLoader(connections[using], ignore_no_migrations=True)
    removed = []
    for full in names:
        app_label, name = full.split(".", 1)
        key = (app_label, name)
        if key in loader.applied_migrations or key not in loader.disk_migrations:
            continue
        module = importlib.import_module(loader.disk_migrations[key].__module__)
        Path(str(module.__file__)).unlink()
        removed.append(full)
    importlib.invalidate_caches()
    return removed
