from __future__ import annotations

from django.apps import AppConfig

from ..checks import register
from . import checks


class SequencesConfig(AppConfig):
    """Named sequences, opt-in: a project without this app has no sequence table and runs
    no sequence check."""

    name = "django_snowid.sequences"
    label = "snowid_sequences"  # not "sequences": django-sequences has that one
    verbose_name = "Named sequences"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        register(checks.CHECKS)
