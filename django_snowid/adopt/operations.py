"""The migration operation ``snowid_adopt`` writes: a primary key's ``AlterField`` to a
Snowflake field that also widens every column holding its values and records where legacy
ids end."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from django.db import models
from django.db.migrations.operations import AlterField
from django.db.models import Max

from ..exceptions import AdoptionError
from ..settings_layouts import get_layout
from .journal import record_done
from .plan import NARROW_DB_TYPES
from .relations import Holder, holders_of
from .schema import column_types

__all__ = ["AdoptSnowflakeIds"]

_SAME_WIDTH: dict[str, type[models.Field]] = {
    "AutoField": models.IntegerField,
    "SmallAutoField": models.SmallIntegerField,
    "BigAutoField": models.BigIntegerField,
}


def _bare(key: models.Field, internal_type: str) -> models.Field:
    """A plain integer column for ``key`` (no constraint), as wide as ``internal_type``."""

    bare = _SAME_WIDTH.get(internal_type, models.BigIntegerField)(db_index=True, null=key.null)
    bare.set_attributes_from_name(key.attname)
    bare.column = key.column
    bare.model = key.model
    return bare


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
        width = old_pk.get_internal_type()
        old_max = from_model._base_manager.using(alias).aggregate(m=Max(old_pk.attname))["m"]
        started = datetime.now(timezone.utc)
        first_id = first_snowflake_id(getattr(self.field, "layout_name", None), started)
        check_below(to_model._meta.label, old_max, first_id)
        keys = [h for h in holders_of(from_model) if h.kind != "pk"]
        sqlite = schema_editor.connection.vendor == "sqlite"  # 64-bit integers, tables remade
        for holder in [] if sqlite else keys:  # a column under a key cannot change type
            for name in schema_editor._constraint_names(
                holder.model, [holder.column], foreign_key=True
            ):
                schema_editor.execute(schema_editor._delete_fk_sql(holder.model, name))
        super().database_forwards(app_label, schema_editor, from_state, to_state)
        for holder in [] if sqlite else keys:  # what Django's AlterField left behind
            self._widen(schema_editor, to_state, holder, width)
        record_done(
            alias,
            label=to_model._meta.label,
            table=to_model._meta.db_table,
            column=to_model._meta.pk.column,
            first_id=first_id,
            old_max=old_max,
            started=started,
        )

    @staticmethod
    def _widen(schema_editor: Any, to_state: Any, holder: Holder, width: str) -> None:
        """``holder``'s column 64-bit, under its foreign key."""
        model = to_state.apps.get_model(holder.model._meta.label)
        field = model._meta.get_field(holder.field.name)
        table, column = model._meta.db_table, holder.column
        db_type = column_types(schema_editor.connection, table).get(column, ("", True))[0]
        if db_type.lower() in NARROW_DB_TYPES:
            schema_editor.alter_field(model, _bare(field, width), _bare(field, "BigAutoField"))
        if not schema_editor._constraint_names(model, [column], foreign_key=True):
            schema_editor.execute(
                schema_editor._create_fk_sql(model, field, "_fk_%(to_table)s_%(to_column)s")
            )

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        raise AdoptionError(
            f"Switching {app_label}.{self.model_name} back from Snowflake ids is a migration of "
            "its own: change the field back to AutoField/BigAutoField and run makemigrations "
            "(the identity then continues above the largest id)."
        )
