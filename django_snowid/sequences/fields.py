"""Model fields filled from a named sequence on insert: a number, or a text of a template."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core import checks
from django.db import models

from ..core.sequence_plan import Template, check_name, day_stamp
from ..exceptions import InvalidSequence, SequenceError, UnknownSequence
from ..fieldbase import IssuedBigIntegerField, IssuedField
from ..inventory import SEQUENCE
from .issuer import draw
from .spec import get_spec

__all__ = ["SequenceField", "SequenceTextField"]


class _SequenceMixin(IssuedField):
    """Draws a value on insert, when the field holds none yet (as ``auto_now_add`` does)."""

    kind = SEQUENCE
    generated_defaults = {"editable": False}

    def __init__(self, *args: Any, sequence: str, **kwargs: Any) -> None:
        try:
            check_name(sequence)
        except ValueError as exc:
            raise InvalidSequence(f"sequence={sequence!r}: {exc}") from None
        self.sequence = sequence
        super().__init__(*args, **kwargs)

    def _draw(self, instance: models.Model) -> tuple[int, str]:
        value, now = draw(self.sequence, instance._state.db)
        return value, day_stamp(now, get_spec(self.sequence).zone)

    def generated_options(self) -> dict[str, Any]:
        return {"sequence": self.sequence}

    def check_options(self) -> list[checks.CheckMessage]:
        # A bad declaration is the settings checks' to report (E302, E303); the field
        # reports what is its own: a name the settings refuse.
        if not apps.is_installed("django_snowid.sequences"):
            return [
                self.error(
                    "'django_snowid.sequences' is not in INSTALLED_APPS: the sequence field "
                    f"{self.model._meta.label}.{self.name} has no table to draw its values "
                    "from.",
                    "django_snowid.E313",
                    hint="Add 'django_snowid.sequences' to INSTALLED_APPS (after "
                    "'django_snowid'), then run migrate. ",
                )
            ]
        try:
            get_spec(self.sequence)
        except UnknownSequence as exc:
            return [self.error(f"sequence={self.sequence!r}: {exc}", "django_snowid.E310")]
        except SequenceError:
            pass
        return []


class SequenceField(_SequenceMixin, IssuedBigIntegerField, models.BigIntegerField):
    """A ``BIGINT`` filled from the named sequence ``sequence`` when a row is inserted."""

    def generate(self, instance: models.Model) -> int:
        return self._draw(instance)[0]


class SequenceTextField(_SequenceMixin, models.CharField):
    """A text made of the named sequence's next value by ``template``, on insert.

    ``template`` has ``{value}`` (``{value:06d}`` pads it) and optionally ``{day}``, the
    day of issue in the sequence's zone (``YYYYMMDD``): ``"INV-{day}-{value:06d}"``.
    """

    def __init__(self, *args: Any, sequence: str, template: str, **kwargs: Any) -> None:
        self.template = template
        kwargs.setdefault("max_length", 40)
        super().__init__(*args, sequence=sequence, **kwargs)

    unset_values = (None, "")

    def generate(self, instance: models.Model) -> str:
        value = Template(self.template).render(*self._draw(instance))
        if self.max_length is not None and len(value) > self.max_length:
            raise SequenceError(
                f"{value!r} is longer than max_length={self.max_length} of "
                f"{self.model.__name__}.{self.name}: raise max_length or the template's "
                "width. The value was drawn and is a gap."
            )
        return value

    def generated_options(self) -> dict[str, Any]:
        return {**super().generated_options(), "template": self.template}

    def check_options(self) -> list[checks.CheckMessage]:
        return [*super().check_options(), *self._check_template()]

    def _check_template(self) -> list[checks.CheckMessage]:
        try:
            template = Template(self.template)
        except ValueError as exc:
            return [self.error(str(exc), "django_snowid.E311")]
        length = template.padded_length()
        if self.max_length is not None and length > self.max_length:
            return [
                self.error(
                    f"template={self.template!r} makes texts of {length} characters, more "
                    f"than max_length={self.max_length}.",
                    "django_snowid.E312",
                )
            ]
        return []
