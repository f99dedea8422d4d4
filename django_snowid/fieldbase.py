"""The base of our fields whose value an issuer makes on INSERT."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar

from django.apps import apps
from django.core import checks
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models.fields import NOT_PROVIDED

from . import inventory
from .checks import HINT
from .exceptions import InvalidShardValue, LayoutError

__all__ = ["IssuedBigIntegerField", "IssuedField"]

#: What ``Field.deconstruct()`` leaves out when a keyword has this value.
_DJANGO_DEFAULTS: Mapping[str, Any] = {"unique": False, "editable": True, "default": NOT_PROVIDED}

if TYPE_CHECKING:  # a mixin of Field classes: typed as a Field
    from django.db.models import Field as _Base
else:
    _Base = object


class IssuedField(_Base):
    """The base (a mixin) of a field whose value is made on INSERT."""

    kind: ClassVar[inventory.Kind]
    generated_defaults: ClassVar[Mapping[str, Any]] = {"unique": True, "editable": False}
    public_module: ClassVar[str | None] = None  # where migrations import the class from
    unset_values: ClassVar[tuple[Any, ...]] = (None,)  # "none yet": an INSERT makes one

    shard_from: str | None

    def __init__(self, *args: Any, shard_from: str | None = None, **kwargs: Any) -> None:
        if shard_from is not None and not isinstance(shard_from, str):
            raise TypeError(f"shard_from= takes an attribute name, not {shard_from!r}.")
        self.shard_from = shard_from
        for option, value in self.generated_defaults.items():
            kwargs.setdefault(option, value)
        super().__init__(*args, **kwargs)

    def generate(self, instance: models.Model) -> Any:
        """A new value for ``instance``, which is being inserted."""
        raise NotImplementedError

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        value = getattr(model_instance, self.attname)
        if type(value) is int:  # made already (bulk_create asks every row): no other test
            return value
        if add and value in self.unset_values:
            value = self.generate(model_instance)
            setattr(model_instance, self.attname, value)
        return value

    def shard_source(self, instance: models.Model) -> int:
        """The non-negative integer ``shard_from`` names, or :class:`InvalidShardValue`."""
        shard_from = self.shard_from
        try:
            value = getattr(instance, shard_from)  # type: ignore[arg-type]
        except AttributeError:
            raise InvalidShardValue(
                f"shard_from={shard_from!r}: {type(instance).__name__} has no such attribute."
            ) from None
        if type(value) is int and value >= 0:
            return value
        label = f"{type(instance).__name__}.{shard_from}"
        if value is None:
            raise InvalidShardValue(
                f"{label} is None: the new value needs it to carry the shard. "
                "Nothing was issued and nothing was written."
            )
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InvalidShardValue(
                f"{label} is {value!r}: the shard comes from a non-negative integer. "
                "Nothing was issued and nothing was written."
            )
        return value

    def shard_sources(self, instances: Sequence[models.Model]) -> list[int]:
        """:meth:`shard_source` of each of ``instances``, in one pass when all are fine."""
        try:
            values = list(map(attrgetter(self.shard_from), instances))  # type: ignore[arg-type]
        except AttributeError:
            values = []
        if len(values) == len(instances) and (
            not values or (set(map(type, values)) == {int} and min(values) >= 0)
        ):
            return values
        return [self.shard_source(instance) for instance in instances]  # names the bad one

    def contribute_to_class(
        self, cls: type[models.Model], name: str, private_only: bool = False, **kwargs: Any
    ) -> None:
        super().contribute_to_class(cls, name, private_only=private_only, **kwargs)
        if not cls._meta.abstract:
            inventory.register(self, self.kind)

    def generated_options(self) -> dict[str, Any]:
        """The family's own keyword arguments, as ``deconstruct()`` writes them."""
        return {}

    def deconstruct(self) -> tuple[str, str, Sequence[Any], dict[str, Any]]:
        name, path, args, kwargs = super().deconstruct()
        cls = type(self)
        if self.public_module and path == f"{cls.__module__}.{cls.__qualname__}":
            path = f"{self.public_module}.{cls.__qualname__}"
        for option, ours in self.generated_defaults.items():
            value = kwargs.pop(option, _DJANGO_DEFAULTS[option])
            if option == "unique" and self.primary_key:
                continue
            if value is not ours and value != ours:
                kwargs[option] = value
        if self.shard_from is not None:
            kwargs["shard_from"] = self.shard_from
        kwargs.update(self.generated_options())
        return name, path, args, kwargs

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        return [*super().check(**kwargs), *self.check_app_installed(), *self.check_options()]

    def check_app_installed(self) -> list[checks.CheckMessage]:
        """E031, said once an app (by its first field of ours)."""
        if apps.is_installed("django_snowid"):
            return []
        ours = inventory.fields(None, self.model._meta.app_label)
        if not ours or ours[0] is not self:
            return []
        more = f" (and {len(ours) - 1} more)" if len(ours) > 1 else ""
        return [
            self.error(
                "'django_snowid' is not in INSTALLED_APPS, yet its fields are used: "
                f"{inventory.field_label(self)}{more}. Without the app their worker-id leases "
                "and order-number streams have no tables (migrate would fail halfway), and "
                "its settings go unchecked.",
                "django_snowid.E031",
                hint="Add 'django_snowid' to INSTALLED_APPS, then run migrate. ",
            )
        ]

    def check_options(self) -> list[checks.CheckMessage]:
        """The family's checks of its own options (by default, ``shard_from``'s)."""
        return self.check_shard_from()

    def error(self, msg: str, id_: str, *, hint: str = "") -> checks.Error:
        """A check error of this field, its hint ending with the link to ``id_``."""
        return checks.Error(msg, hint=f"{hint}{HINT.format(id=id_)}", obj=self, id=id_)

    def check_shard_from(self) -> list[checks.CheckMessage]:
        """E201: ``shard_from`` must name a field or an attribute of the model."""
        if self.shard_from is None:
            return []
        model = self.model
        fields = model._meta.get_fields()
        names = {f.name for f in fields} | {getattr(f, "attname", None) for f in fields}
        if self.shard_from in names or hasattr(model, self.shard_from):
            return []
        return [
            self.error(
                f"shard_from={self.shard_from!r} names no field or attribute of "
                f"{model._meta.label}.",
                "django_snowid.E201",
            )
        ]

    def values_end(self) -> tuple[int, int, str] | None:
        """For W201: (shard bits, spread bits above, name), or ``None`` when unknown."""

        return None

    def spread_of_values(self, seen: set[int]) -> tuple[int, str] | None:
        """How many low bits of this field's values are evenly spread, and why."""
        label = inventory.field_label(self)
        try:
            end = self.values_end()
        except (LayoutError, TypeError):
            return None  # E003, E101 or E202 say what is wrong with it
        if end is None:
            return None
        width, above, named = end
        if not width:
            return above, f"{label} ({named})"
        if self.shard_from is None:
            return 0, f"{label}, whose shard part is always 0 (it has no shard_from)"
        try:
            source = _spread_of(self.model._meta.get_field(self.shard_from), seen)
        except FieldDoesNotExist:  # an attribute, not a field: nothing known
            return None
        if source is None:
            return None
        if source[0] < width:
            return source[0], f"{label}, which ends with the low bits of {source[1]}"
        return width + above, label

    def check_shard_spread(self, needed: int) -> list[checks.CheckMessage]:
        """W201: ``shard_from`` names values whose low bits are known to be uneven."""
        if self.shard_from is None or not needed:
            return []
        try:
            source = self.model._meta.get_field(self.shard_from)
        except FieldDoesNotExist:  # an attribute (E201 covers a name that is nothing)
            return []
        spread = _spread_of(source, {id(self)})
        if spread is None or spread[0] >= needed:
            return []
        bits, where = spread
        return [
            checks.Warning(
                f"shard_from={self.shard_from!r} takes the shard from {where}: only the low "
                f"{bits} bits of its values are evenly spread, and the {needed} this field's "
                "shard needs would put most rows on a few shards.",
                hint=f"Give the source's layout spread_bits >= {needed} (the default is 4). "
                + HINT.format(id="django_snowid.W201"),
                obj=self,
                id="django_snowid.W201",
            )
        ]


def _spread_of(field: Any, seen: set[int]) -> tuple[int, str] | None:
    """What ``spread_of_values`` says of ``field`` (ours, or a foreign key to ours)."""
    if id(field) in seen:
        return None
    seen.add(id(field))
    target = getattr(field, "target_field", None)
    if getattr(field, "remote_field", None) is not None and target is not None:
        return _spread_of(target, seen)  # a foreign key holds its target's values
    if not isinstance(field, IssuedField):
        return None
    return field.spread_of_values(seen)


class IssuedBigIntegerField(IssuedField):
    """The base (a mixin) of an issued field of a ``bigint`` column."""

    def get_db_prep_save(self, value: Any, connection: Any) -> Any:
        # bulk_create's hot path: a positive int (what an issuer makes) skips Django's int()
        # and psycopg 3's Int8; others end as plain ints too (psycopg mixes no Int8 and int).
        if type(value) is int and value > 0:
            return value
        prepared = super().get_db_prep_save(value, connection)
        return int(prepared) if isinstance(prepared, int) else prepared
