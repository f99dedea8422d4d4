from __future__ import annotations

from django.apps import AppConfig

from . import checks
from .sequences import checks as sequence_checks


class SnowidConfig(AppConfig):
    name = "django_snowid"
    label = "django_snowid"
    verbose_name = "Snowflake ids"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        checks.register_checks()
        sequence_checks.register_checks()
