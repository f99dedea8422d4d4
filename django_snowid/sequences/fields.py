"""Model fields filled from a named sequence on insert: a number, or a text of a template."""

from __future__ import annotations

from typing import Any

from django.core import checks
from django.db import models

from .. import inventory
from ..core.sequence_plan import Template, check_name, day_stamp
from ..exceptions import InvalidSequence, SequenceError, UnknownSequence
from .spec import get_spec
from .stores import get_store

__all__ = ["SequenceField", "SequenceTextField"]

HINT = "See the README section 'System checks', {id}."


def _error(msg: str, field: models.Field, id_: str) -> checks.Error:
    return checks.Error(msg, hint=HINT.format(id=id_), obj=field, id=id_)


class _SequenceMixin:
    """Draws a value on insert, when the field holds none yet (as ``auto_now_add`` does)."""

    sequence: str
    attname: str

    def _init_sequence(self, sequence: str) -> None:
        try:
            check_name(sequence)
        except ValueError as exc:
            raise InvalidSequence(f"sequence={sequence!r}: {exc}") from None
        self.sequence = sequence

    def _draw(self, instance: models.Model) -> tuple[int, str]:
        spec = get_spec(self.sequence)
        store = get_store()
        now = store.clock()
        value = store.next_values(spec, 1, instance._state.db, now).start
        return value, day_stamp(now, spec.zone)

    def contribute_to_class(
        self, cls: type[models.Model], name: str, private_only: bool = False
    ) -> None:
        super().contribute_to_class(cls, name, private_only=private_only)  # type: ignore[misc]
        if not cls._meta.abstract:
            inventory.register(self, "sequence")  # type: ignore[arg-type]

    def _check_sequence(self) -> list[checks.CheckMessage]:
        # A bad declaration is the settings checks' to report (E302, E303); the field
        # reports what is its own: a name the settings refuse.
        try:
            get_spec(self.sequence)
        except UnknownSequence as exc:
            return [_error(f"sequence={self.sequence!r}: {exc}", self, "django_snowid.E310")]  # type: ignore[arg-type]
        except SequenceError:
            pass
        return []


class SequenceField(_SequenceMixin, models.BigIntegerField):
    """A ``BIGINT`` filled from the named sequence ``sequence`` when a row is inserted."""

    def __init__(self, *args: Any, sequence: str, **kwargs: Any) -> None:
        self._init_sequence(sequence)
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        value = getattr(model_instance, self.attname)
        if add and value is None:
            value = self._draw(model_instance)[0]
            setattr(model_instance, self.attname, value)
        return value

    def deconstruct(self) -> Any:
        name, _path, args, kwargs = super().deconstruct()
        kwargs["sequence"] = self.sequence
        if kwargs.get("editable") is False:
            del kwargs["editable"]
        return name, "django_snowid.sequences.fields.SequenceField", args, kwargs

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        return [*super().check(**kwargs), *self._check_sequence()]


class SequenceTextField(_SequenceMixin, models.CharField):
    """A text made of the named sequence's next value by ``template``, on insert.

    ``template`` has ``{value}`` (``{value:06d}`` pads it) and optionally ``{day}``, the
    day of issue in the sequence's zone (``YYYYMMDD``): ``"INV-{day}-{value:06d}"``.
    """

    def __init__(self, *args: Any, sequence: str, template: str, **kwargs: Any) -> None:
        self._init_sequence(sequence)
        self.template = template
        kwargs.setdefault("editable", False)
        kwargs.setdefault("max_length", 40)
        super().__init__(*args, **kwargs)

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        value = getattr(model_instance, self.attname)
        if add and value in (None, ""):
            value = Template(self.template).render(*self._draw(model_instance))
            if self.max_length is not None and len(value) > self.max_length:
                raise SequenceError(
                    f"{value!r} is longer than max_length={self.max_length} of "
                    f"{self.model.__name__}.{self.name}: raise max_length or the template's "
                    "width. The value was drawn and is a gap."
                )
            setattr(model_instance, self.attname, value)
        return value

    def deconstruct(self) -> Any:
        name, _path, args, kwargs = super().deconstruct()
        kwargs["sequence"] = self.sequence
        kwargs["template"] = self.template
        if kwargs.get("editable") is False:
            del kwargs["editable"]
        return name, "django_snowid.sequences.fields.SequenceTextField", args, kwargs

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        return [*super().check(**kwargs), *self._check_sequence(), *self._check_template()]

    def _check_template(self) -> list[checks.CheckMessage]:
        try:
            template = Template(self.template)
        except ValueError as exc:
            return [_error(str(exc), self, "django_snowid.E311")]
        length = template.padded_length()
        if self.max_length is not None and length > self.max_length:
            return [
                _error(
                    f"template={self.template!r} makes texts of {length} characters, more "
                    f"than max_length={self.max_length}.",
                    self,
                    "django_snowid.E312",
                )
            ]
        return []
