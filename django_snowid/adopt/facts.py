"""What a switch to Snowflake ids starts from: the model, the columns holding its ids,
the generic relations pointing at it, and what cannot be done."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db import connections, models
from django.db.migrations.autodetector import MigrationAutodetector
from django.db.migrations.executor import MigrationExecutor

from .. import inventory
from ..exceptions import AdoptionError
from .operations import first_snowflake_id
from .plan import NARROW_DB_TYPES, Column, Facts
from .relations import generic_keys, holders_of, holds_64_bit
from .schema import column_types

__all__ = ["Change", "read_facts"]

AUTO_TYPES = ("AutoField", "BigAutoField", "SmallAutoField")


@dataclass(frozen=True)
class Change:
    """A field the migration written for the switch alters, as the code has it."""

    app_label: str
    model_name: str
    name: str
    field: models.Field
    adopt: bool  # the adopted key (else a generic relation's object id)


def _rows(connection: Any, table: str) -> int:
    """The rows of ``table``: counted when few, the planner's estimate when many."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass", [table]
            )
            estimate = cursor.fetchone()[0]
            if estimate is not None and estimate > 1_000_000:
                return int(estimate)
        cursor.execute(f"SELECT COUNT(*) FROM {connection.ops.quote_name(table)}")
        return int(cursor.fetchone()[0])


def _sequence(connection: Any, table: str, column: str) -> str | None:
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [table, column])
        return cursor.fetchone()[0]


def read_facts(label: str, *, using: str) -> tuple[Facts, list[Change]]:
    """The facts of switching ``label`` on ``using`` (:class:`AdoptionError` for no model)."""

    try:
        model = apps.get_model(label)
    except (LookupError, ValueError):
        raise AdoptionError(f"{label!r} is not an installed model (app_label.ModelName).") from None
    connection = connections[using]
    executor = MigrationExecutor(connection)
    loader = executor.loader
    meta = model._meta
    refusals: list[str] = []
    notes: list[str] = []
    if meta.app_label not in loader.migrated_apps:
        raise AdoptionError(f"{label}: app {meta.app_label!r} has no migrations.")
    state = loader.project_state()
    old = state.apps.get_model(meta.app_label, meta.model_name)
    old_pk, pk = old._meta.pk, meta.pk
    assert old_pk is not None and pk is not None
    old_type, code_type = old_pk.get_internal_type(), type(pk).__name__
    is_ours = inventory.kind_of(pk) is inventory.SNOWFLAKE
    if old_type not in AUTO_TYPES:
        raise AdoptionError(
            f"{label}: its primary key in the migrations is a {type(old_pk).__name__}, not an "
            "AutoField or BigAutoField: nothing to adopt (already switched?)."
        )
    if not is_ours:
        refusals.append(
            f"{label}.{pk.name} is a {code_type} in the code: make it a SnowflakeAutoField "
            "(or set DEFAULT_AUTO_FIELD) first; the plan shows what the switch will do."
        )
    pending = [
        f"{m.app_label}.{m.name}" for m, _ in executor.migration_plan(loader.graph.leaf_nodes())
    ]
    changes: list[Change] = (
        [Change(meta.app_label, str(meta.model_name), pk.name, pk, True)] if is_ours else []
    )

    types: dict[str, dict[str, tuple[str, bool]]] = {}

    def column(holder_model: Any, field: Any, kind: str) -> Column:
        table = holder_model._meta.db_table
        if table not in types:
            types[table] = column_types(connection, table)
        db_type, nullable = types[table].get(field.column, ("", True))
        return Column(
            table=table,
            column=field.column,
            kind=kind,
            label=f"{holder_model._meta.label}.{field.name}",
            db_type=db_type,
            nullable=nullable,
            rows=_rows(connection, table),
        )

    columns = [column(h.model, h.field, h.kind) for h in holders_of(old)]
    columns += _generic_columns(model, state, connection, column, changes, refusals, notes)
    sequence = _sequence(connection, meta.db_table, pk.column)
    old_max = inventory.column_max(pk, using=using) if _rows(connection, meta.db_table) else None
    layout_name = getattr(pk, "layout_name", None) if is_ours else None
    first_id = first_snowflake_id(layout_name)
    if old_max is not None and old_max >= first_id:
        refusals.append(
            f"{label}: its largest id, {old_max}, is not below the first Snowflake id of now "
            f"({first_id}): new ids would not all be larger than the old ones."
        )
    involved = {c.label.split(".")[0] for c in columns} | {meta.app_label}
    waiting = [p for p in pending if p.split(".")[0] in involved]
    if waiting:
        refusals.append(
            f"Apply the pending migrations first ({', '.join(waiting)}): the switch writes the "
            "next migration of its apps."
        )
    apps_written = sorted({c.app_label for c in changes})
    leaves = dict(loader.graph.leaf_nodes())
    migrations_ = tuple(
        f"{app}.{MigrationAutodetector.parse_number(leaves[app]) + 1:04d}_adopt_snowflake_ids"
        if MigrationAutodetector.parse_number(leaves[app]) is not None
        else f"{app}.adopt_snowflake_ids"
        for app in apps_written
    )
    facts = Facts(
        label=meta.label,
        vendor=connection.vendor,
        table=meta.db_table,
        column=pk.column,
        old_type=old_type,
        code_type=code_type,
        old_max=old_max,
        first_id=first_id,
        sequence=sequence,
        columns=tuple(columns),
        migrations=migrations_,
        refusals=tuple(refusals),
        notes=tuple(notes),
    )
    return facts, changes


def _generic_columns(
    model: Any,
    state: Any,
    connection: Any,
    column: Any,
    changes: list[Change],
    refusals: list[str],
    notes: list[str],
) -> list[Column]:
    """The object-id columns of generic relations that may point at ``model``."""
    from django.contrib.contenttypes.models import ContentType

    found = []
    content_type = None
    for key in generic_keys():
        field = key.id_field
        if field.get_internal_type() not in (
            "IntegerField",
            "PositiveIntegerField",
            "SmallIntegerField",
            "PositiveSmallIntegerField",
            "BigIntegerField",
            "PositiveBigIntegerField",
        ):
            continue  # text and UUID ids: nothing to widen
        meta = key.model._meta
        try:
            old = state.apps.get_model(meta.app_label, meta.model_name)._meta.get_field(field.name)
        except LookupError:
            continue
        holder = column(key.model, field, "generic relation")
        if holder.db_type.lower() not in NARROW_DB_TYPES and holds_64_bit(old):
            continue
        if holds_64_bit(field):
            found.append(holder)
            if not holds_64_bit(old):
                changes.append(
                    Change(meta.app_label, str(meta.model_name), field.name, field, False)
                )
            continue
        if content_type is None:
            content_type = ContentType.objects.db_manager(connection.alias).get_for_model(model)
        pointing = (
            key.model._base_manager.using(connection.alias)
            .filter(**{_ct_name(key): content_type})
            .count()
        )
        what = f"{key.label} ({type(field).__name__}, app {key.app_label!r})"
        if pointing:
            refusals.append(
                f"{what} holds {pointing} ids of {model._meta.label} and cannot hold a "
                "Snowflake id: relate its rows through a model of your own first (see the "
                "docs' recipe for django-taggit)."
            )
        else:
            notes.append(
                f"{what} cannot hold a Snowflake id (W900); no row of it points at "
                f"{model._meta.label}."
            )
    return found


def _ct_name(key: Any) -> str:
    from django.contrib.contenttypes.fields import GenericForeignKey

    gfk = next(
        f
        for f in key.model._meta.private_fields
        if isinstance(f, GenericForeignKey) and f.name == key.name
    )
    return str(gfk.ct_field)
