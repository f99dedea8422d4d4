"""Model fields whose values are Snowflake ids allocated in Python before the INSERT."""

from __future__ import annotations

import contextlib
from typing import Any

import django
from django.core import checks
from django.db import connections, models, router
from django.db.models.fields import NOT_PROVIDED

from ..core.layout import DecodedId, Layout
from ..exceptions import LayoutError
from ..fieldbase import IssuedBigIntegerField
from ..inventory import SNOWFLAKE
from ..settings_layouts import get_layout, layout_names
from .database.default import SnowflakeDefault
from .database.geometry import Geometry
from .issuer import get_generator
from .lookups import LOOKUPS

__all__ = ["SnowflakeAutoField", "SnowflakeField"]


def _assigned_on_save() -> None:
    """The "default" of SnowflakeAutoField: nothing until ``save()`` assigns an id."""
    return None


class _SnowflakeMixin(IssuedBigIntegerField):
    """What both fields share: a layout, its generator, and ``shard_from``."""

    kind = SNOWFLAKE
    public_module = "django_snowid.fields"

    # Our values are known before the INSERT, also with a database default: no RETURNING.
    db_returning = False

    def __init__(
        self, *args: Any, layout: str | None = None, database_ids: bool = False, **kwargs: Any
    ) -> None:
        if layout is not None and not isinstance(layout, str):
            raise TypeError(f"layout= takes the name of a configured layout, not {layout!r}.")
        if not isinstance(database_ids, bool):
            raise TypeError(f"database_ids= takes True or False, not {database_ids!r}.")
        self.layout_name = layout
        self.database_ids = database_ids
        if database_ids and django.VERSION >= (5, 0) and "db_default" not in kwargs:
            # Rows inserted without this column (COPY, INSERT ... SELECT) get a database id.
            with contextlib.suppress(LayoutError):  # E003/E101 say why
                kwargs["db_default"] = SnowflakeDefault(Geometry.of(get_layout(layout)).key)
        super().__init__(*args, **kwargs)

    def get_default(self) -> Any:
        # A new instance holds None, never DatabaseDefault: pre_save fills the value.
        if self.default is NOT_PROVIDED or self.default is _assigned_on_save:
            return None
        return super().get_default()

    @property
    def layout(self) -> Layout:
        """The layout this field's ids use (resolved from the settings)."""
        return get_layout(self.layout_name)

    def decode(self, value: int | str) -> DecodedId:
        return self.layout.decode(value)

    def new_id(self, instance: models.Model | None = None) -> int:
        """A new id of this field's layout; with ``shard_from``, ``instance``'s shard ends it."""
        if self.shard_from is None:
            return get_generator(self.layout_name).next_id()
        if instance is None:
            raise TypeError(f"shard_from={self.shard_from!r}: new_id() needs the instance.")
        # Refuse a bad shard source before an id is taken.
        shard = self.layout.shard_of(self.shard_source(instance))
        return get_generator(self.layout_name).next_id() | shard

    generate = get_pk_value_on_save = new_id

    def generated_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {} if self.layout_name is None else {"layout": self.layout_name}
        if self.database_ids:
            options["database_ids"] = True
        return options

    def check_options(self) -> list[checks.CheckMessage]:
        if self.layout_name is None and self.shard_from is None:
            return []
        try:
            layout = get_layout(self.layout_name)
        except LayoutError:
            if self.layout_name in layout_names():
                return []  # configured but invalid: E003 (or E001, the epoch) says why
            return [
                self.error(
                    f"layout={self.layout_name!r} names no configured layout; "
                    f"known layouts: {layout_names()}.",
                    "django_snowid.E101",
                    hint="Add it to SNOWID_LAYOUTS. ",
                )
            ]
        if self.shard_from is not None and not layout.shard_bits:
            return [
                self.error(
                    f"shard_from={self.shard_from!r} needs a layout with shard bits; layout "
                    f"{layout.name!r} ({layout.describe()}) has none.",
                    "django_snowid.E400",
                    hint="Give the layout shard_bits (or use the 'sharded' preset). ",
                )
            ]
        return [*self.check_shard_from(), *self.check_shard_spread(layout.shard_bits)]

    def values_end(self) -> tuple[int, int, str]:

        layout = self.layout
        spread = layout.spread_bits or 0
        return layout.shard_bits, spread, f"layout {layout.name!r}, spread_bits={spread}"


class SnowflakeField(_SnowflakeMixin, models.BigIntegerField):
    """A BIGINT filled with a new Snowflake id on insert when empty (unique, not editable)."""

    description = "Snowflake id (64-bit, time-ordered)"


class SnowflakeAutoField(_SnowflakeMixin, models.BigAutoField):
    """Drop-in replacement for ``BigAutoField``: a BIGINT set in Python before the INSERT.
    On PostgreSQL and MariaDB/MySQL the key of an auto-created many-to-many table is the
    database's (an identity, serial or AUTO_INCREMENT column, as Django makes it), whatever
    its width."""

    description = "Snowflake primary key (64-bit, time-ordered)"
    # A default (None until save()) lets Model._save_table() INSERT without an UPDATE first.
    generated_defaults = {"default": _assigned_on_save}

    _through = False  # the key of an auto-created many-to-many table (its Meta says so)

    def contribute_to_class(
        self, cls: type[models.Model], name: str, private_only: bool = False, **kwargs: Any
    ) -> None:
        super().contribute_to_class(cls, name, private_only=private_only, **kwargs)
        self._through = bool(cls._meta.auto_created)

    @property
    def db_returning(self) -> bool:  # type: ignore[override]
        return self._through

    def get_internal_type(self) -> str:
        # A plain bigint column (no identity/AUTO_INCREMENT).
        return "BigAutoField" if self._through else "BigIntegerField"

    def _database_numbers(self, instance: models.Model | None) -> bool:
        """Whether the database numbers a row of the auto-created many-to-many table: on a
        server, where a table made under ``AutoField`` holds 32 bits (SQLite's integers all
        hold 64, and a table it rebuilt may have no generator)."""
        alias = router.db_for_write(self.model, instance=instance)
        return bool(connections[alias].vendor != "sqlite")

    def new_id(self, instance: models.Model | None = None) -> int | None:  # type: ignore[override]
        if self.shard_from is None and not self._through:  # bulk_create asks every row
            return get_generator(self.layout_name).next_id()
        if self._through and self._database_numbers(instance):
            return None
        return super().new_id(instance)

    generate = get_pk_value_on_save = new_id  # type: ignore[assignment]


# ``pk__created_after=``, ``__created_before=``, ``__created_range=`` on both fields.
for _field_class in (SnowflakeField, SnowflakeAutoField):
    for _lookup in LOOKUPS:
        _field_class.register_lookup(_lookup)
