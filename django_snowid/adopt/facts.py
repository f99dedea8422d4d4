"""What a switch to Snowflake ids starts from: the model, the columns holding its ids, the
generic relations pointing at it, the catalog of those columns, and what cannot be done."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.db import connections, models
from django.db.migrations.autodetector import MigrationAutodetector
from django.db.migrations.executor import MigrationExecutor

from .. import inventory
from ..checks import project_app
from ..exceptions import AdoptionError
from . import pg_catalog
from .holding import Held, held_columns
from .operations import first_snowflake_id
from .plan import NARROW_DB_TYPES, Column, Facts
from .recorder import narrow_recorder
from .relations import GenericKey, generic_keys, holds_64_bit
from .schema import column_types

__all__ = ["Change", "read_facts"]

AUTO_TYPES = ("AutoField", "BigAutoField", "SmallAutoField")
INTEGER_TYPES = (
    "IntegerField",
    "PositiveIntegerField",
    "SmallIntegerField",
    "PositiveSmallIntegerField",
    "BigIntegerField",
    "PositiveBigIntegerField",
)


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
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass", [quote(table)]
            )
            estimate = cursor.fetchone()[0]
            if estimate is not None and estimate > 1_000_000:
                return int(estimate)
        cursor.execute(f"SELECT COUNT(*) FROM {quote(table)}")
        return int(cursor.fetchone()[0])


def _sequence(connection: Any, table: str, column: str) -> str | None:
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_serial_sequence(%s, %s)", [connection.ops.quote_name(table), column]
        )
        return cursor.fetchone()[0]


def _target(label: str) -> type[models.Model]:
    """The model ``label`` names, if a switch can take it (else :class:`AdoptionError`)."""
    try:
        model = apps.get_model(label)
    except (LookupError, ValueError):
        raise AdoptionError(f"{label!r} is not an installed model (app_label.ModelName).") from None
    owner = model._meta.auto_created
    if owner:
        field = next(f for f in owner._meta.local_many_to_many if f.remote_field.through is model)
        raise AdoptionError(
            f"{label} is the auto-created many-to-many table of {owner._meta.label}."
            f"{field.name}: it is switched with the models it joins (its own key too). Run "
            f"snowid_adopt on {owner._meta.label} or on {field.related_model._meta.label}."
        )
    return model


@dataclass
class _Reading:
    model: type[models.Model]
    old: type[models.Model]  # the model as the applied migrations have it
    connection: Any
    refusals: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    types: dict[str, dict[str, tuple[str, bool]]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.model._meta.label

    def column(self, table: str, name: str, kind: str, label: str) -> Column:
        if table not in self.types:
            self.types[table] = column_types(self.connection, table)
        db_type, nullable = self.types[table].get(name, ("", True))
        rows = _rows(self.connection, table)
        return Column(table, name, kind, label, db_type, nullable, rows)


def _read_key(reading: _Reading) -> tuple[str, str, bool]:
    """The key's type in the migrations and in the code, and whether the code has ours."""
    old_pk, pk = reading.old._meta.pk, reading.model._meta.pk
    assert old_pk is not None and pk is not None
    old_type, code_type = old_pk.get_internal_type(), type(pk).__name__
    if old_type not in AUTO_TYPES:
        raise AdoptionError(
            f"{reading.label}: its primary key in the migrations is a {type(old_pk).__name__}, "
            "not an AutoField or BigAutoField: nothing to adopt (already switched?)."
        )
    is_ours = inventory.kind_of(pk) is inventory.SNOWFLAKE
    if is_ours:
        meta = reading.model._meta
        reading.changes.append(Change(meta.app_label, str(meta.model_name), pk.name, pk, True))
    else:
        reading.refusals.append(
            f"{reading.label}.{pk.name} is a {code_type} in the code: make it a "
            "SnowflakeAutoField (or set DEFAULT_AUTO_FIELD) first; the plan shows what the "
            "switch will do."
        )
    return old_type, code_type, is_ours


def _held(reading: _Reading) -> list[Column]:
    held: list[Held] = held_columns(reading.connection, reading.old)
    return [reading.column(h.table, h.column, h.kind, h.label) for h in held]


def _generic(reading: _Reading) -> list[Column]:
    """The object-id columns of generic relations that may point at the model."""
    found = []
    for key in generic_keys():
        column = _generic_column(reading, key)
        if column is not None:
            found.append(column)
    return found


def _generic_column(reading: _Reading, key: GenericKey) -> Column | None:
    field = key.id_field
    if field.get_internal_type() not in INTEGER_TYPES:
        return None  # text and UUID ids: nothing to widen
    meta = key.model._meta
    try:
        state_model = reading.old._meta.apps.get_model(meta.app_label, meta.model_name)
        old = state_model._meta.get_field(field.name)
    except LookupError:
        return None
    holder = reading.column(meta.db_table, field.column, "generic relation", key.label)
    if holder.db_type.lower() not in NARROW_DB_TYPES and holds_64_bit(old):
        return None
    if holds_64_bit(field):
        if not holds_64_bit(old):
            reading.changes.append(
                Change(meta.app_label, str(meta.model_name), field.name, field, False)
            )
        return holder
    _narrow_generic(reading, key)
    return None


def _narrow_generic(reading: _Reading, key: GenericKey) -> None:
    from django.contrib.contenttypes.models import ContentType

    field, alias = key.id_field, reading.connection.alias
    content_type = ContentType.objects.db_manager(alias).get_for_model(reading.model)
    gfk = next(f for f in key.model._meta.private_fields if getattr(f, "name", "") == key.name)
    pointing = (
        key.model._base_manager.using(alias).filter(**{str(gfk.ct_field): content_type}).count()
    )
    what = f"{key.label} ({type(field).__name__}, app {key.app_label!r})"
    if project_app(key.model._meta.app_config):
        wider = (
            "PositiveBigIntegerField" if "Positive" in type(field).__name__ else "BigIntegerField"
        )
        fix = f"make it a {wider} in the code: the switch then widens its column too"
    else:
        fix = (
            "relate its rows through a model of your own first (see the docs' recipe for "
            "django-taggit)"
        )
    if pointing:
        reading.refusals.append(
            f"{what} holds {pointing} ids of {reading.label} and cannot hold a Snowflake id: {fix}."
        )
    else:
        reading.notes.append(
            f"{what} cannot hold a Snowflake id (W900); no row of it points at {reading.label}"
            f"; {fix}."
        )


def _catalog(reading: _Reading, columns: list[Column]) -> tuple[pg_catalog.Built, ...]:
    """PostgreSQL: what the online switch makes again, and a refusal for anything else
    depending on the converted columns."""
    if reading.connection.vendor != "postgresql":
        return ()
    converted: dict[str, list[str]] = {}
    for column in columns:
        if column.rewrite:
            converted.setdefault(column.table, []).append(column.column)
    for table, names in converted.items():
        on = ", ".join(f"{table}.{name}" for name in names)
        for what in pg_catalog.dependents(reading.connection, table, names):
            reading.refusals.append(
                f"The {what} depends on {on}, whose type the switch changes: drop it before "
                "the switch and create it again after (a view's definition: "
                "pg_get_viewdef('its name'))."
            )
    return tuple(pg_catalog.built_objects(reading.connection, converted))


def _boundary(reading: _Reading, is_ours: bool, using: str) -> tuple[int | None, int]:
    """The largest id now, and the first Snowflake id of now (refused if not above)."""
    pk = reading.model._meta.pk
    table = reading.model._meta.db_table
    old_max = inventory.column_max(pk, using=using) if _rows(reading.connection, table) else None
    first_id = first_snowflake_id(getattr(pk, "layout_name", None) if is_ours else None)
    if old_max is not None and old_max >= first_id:
        reading.refusals.append(
            f"{reading.label}: its largest id, {old_max}, is not below the first Snowflake id "
            f"of now ({first_id}): new ids would not all be larger than the old ones."
        )
    return old_max, first_id


def _migrations(
    reading: _Reading, executor: MigrationExecutor, columns: list[Column]
) -> tuple[str, ...]:
    """The migrations the switch writes; a refusal while its apps have pending ones."""
    loader = executor.loader
    pending = [
        f"{m.app_label}.{m.name}" for m, _ in executor.migration_plan(loader.graph.leaf_nodes())
    ]
    involved = {c.label.split(".")[0] for c in columns} | {reading.model._meta.app_label}
    waiting = [p for p in pending if p.split(".")[0] in involved]
    if waiting:
        reading.refusals.append(
            f"Apply the pending migrations first ({', '.join(waiting)}): the switch writes the "
            "next migration of its apps."
        )
    leaves = dict(loader.graph.leaf_nodes())
    names = []
    for app in sorted({c.app_label for c in reading.changes}):
        number = MigrationAutodetector.parse_number(leaves[app])
        names.append(
            f"{app}.{number + 1:04d}_adopt_snowflake_ids"
            if number is not None
            else f"{app}.adopt_snowflake_ids"
        )
    return tuple(names)


def read_facts(label: str, *, using: str) -> tuple[Facts, list[Change]]:
    """The facts of switching ``label`` on ``using`` (:class:`AdoptionError` for no model)."""

    model = _target(label)
    meta = model._meta
    connection = connections[using]
    executor = MigrationExecutor(connection)
    if meta.app_label not in executor.loader.migrated_apps:
        raise AdoptionError(f"{label}: app {meta.app_label!r} has no migrations.")
    old = executor.loader.project_state().apps.get_model(meta.app_label, meta.model_name)
    reading = _Reading(model, old, connection)
    old_type, code_type, is_ours = _read_key(reading)
    columns = _held(reading) + _generic(reading)
    rebuilt = _catalog(reading, columns)
    old_max, first_id = _boundary(reading, is_ours, using)
    pk = meta.pk
    assert pk is not None
    facts = Facts(
        label=meta.label,
        vendor=connection.vendor,
        table=meta.db_table,
        column=pk.column,
        old_type=old_type,
        code_type=code_type,
        old_max=old_max,
        first_id=first_id,
        sequence=_sequence(connection, meta.db_table, pk.column),
        columns=tuple(columns),
        migrations=_migrations(reading, executor, columns),
        refusals=tuple(reading.refusals),
        notes=tuple(reading.notes),
        rebuilt=rebuilt,
        recorder=narrow_recorder(using),
    )
    return facts, reading.changes
