"""The migration operation ``snowid_adopt`` writes: a primary key's ``AlterField`` to a
Snowflake field that also widens every column holding its values and records where legacy
ids end."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from django.db.migrations.operations import AlterField
from django.db.models import Max
from django.db.models.fields import NOT_PROVIDED

from ..exceptions import AdoptionError
from ..settings_layouts import get_layout
from . import catalog
from .holding import held_columns
from .journal import record_done
from .plan import NARROW_DB_TYPES
from .schema import column_types
from .widen import widen_in_place

__all__ = ["AdoptSnowflakeIds"]


def first_snowflake_id(layout_name: str | None, moment: datetime | None = None) -> int:
    """The smallest id ``layout_name`` issues from ``moment`` (now) on."""
    return get_layout(layout_name).min_id_at(moment or datetime.now(timezone.utc))


def check_below(label: str, old_max: int | None, first_id: int) -> None:
    if old_max is not None and old_max >= first_id:
        raise AdoptionError(
            f"{label}: its largest id, {old_max}, is not below the first Snowflake id of now "
            f"({first_id}): new ids would not all be larger than the old ones. Nothing was "
            "changed."
        )


def narrow_columns(connection: Any, model: Any) -> list[tuple[str, str]]:
    """The columns of ``model``'s switch narrower than 64 bits on ``connection``."""
    types: dict[str, dict[str, tuple[str, bool]]] = {}
    found = []
    for held in held_columns(connection, model):
        if held.table not in types:
            types[held.table] = column_types(connection, held.table)
        if types[held.table].get(held.column, ("", True))[0].lower() in NARROW_DB_TYPES:
            found.append((held.table, held.column))
    return found


def widen_keeping_the_catalog(schema_editor: Any, model: Any) -> None:
    """``model``'s columns made bigint in place; :class:`AdoptionError` if the catalog
    then differs from before (integer -> bigint aside)."""
    connection = schema_editor.connection
    pk = (model._meta.db_table, model._meta.pk.column)
    columns = narrow_columns(connection, model)
    tables = {pk[0], *(t for t, _ in columns)}
    tables |= {r.table for r in catalog.references(connection, tables)}
    before = catalog.snapshot(connection, tables)
    widen_in_place(connection, columns, pk)
    changed = catalog.differences(before, catalog.snapshot(connection, tables), columns, pk)
    if changed:
        raise AdoptionError(
            f"Switching {model._meta.label} changed more than the columns' types; nothing is "
            f"recorded: {'; '.join(changed)}"
        )


def _database_default(schema_editor: Any, model: Any) -> None:
    new = model._meta.pk
    if not (hasattr(new, "has_db_default") and new.has_db_default()):
        return
    old = new.clone()
    old.db_default = NOT_PROVIDED
    old.set_attributes_from_name(new.name)
    old.model = model
    schema_editor.alter_field(model, old, new)


class AdoptSnowflakeIds(AlterField):
    """Switch a model's primary key to a Snowflake field, keeping every id."""

    def describe(self) -> str:
        return f"Adopt Snowflake ids for {self.model_name}"

    @property
    def migration_name_fragment(self) -> str:
        return f"adopt_snowflake_ids_{self.model_name_lower}"

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        from_model = from_state.apps.get_model(app_label, self.model_name)
        to_model = to_state.apps.get_model(app_label, self.model_name)
        alias = schema_editor.connection.alias
        if not self.allow_migrate_model(alias, to_model):
            return
        old_pk = from_model._meta.pk
        old_max = from_model._base_manager.using(alias).aggregate(m=Max(old_pk.attname))["m"]
        started = datetime.now(timezone.utc)
        first_id = first_snowflake_id(getattr(self.field, "layout_name", None), started)
        check_below(to_model._meta.label, old_max, first_id)
        if schema_editor.connection.vendor == "sqlite":  # 64-bit integers, tables remade
            super().database_forwards(app_label, schema_editor, from_state, to_state)
        else:
            widen_keeping_the_catalog(schema_editor, from_model)
            _database_default(schema_editor, to_model)
        record_done(
            alias,
            label=to_model._meta.label,
            table=to_model._meta.db_table,
            column=to_model._meta.pk.column,
            first_id=first_id,
            old_max=old_max,
            started=started,
        )

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        raise AdoptionError(
            f"Switching {app_label}.{self.model_name} back from Snowflake ids is a migration of "
            "its own: change the field back to AutoField/BigAutoField and run makemigrations "
            "(the identity then continues above the largest id)."
        )
