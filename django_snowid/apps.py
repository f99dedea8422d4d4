from __future__ import annotations

from django.apps import AppConfig


class SnowidConfig(AppConfig):
    name = "django_snowid"
    label = "django_snowid"
    verbose_name = "Snowflake ids"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks, registry  # noqa: F401  (registers checks and signal receivers)
        from .sequences import checks as sequence_checks  # noqa: F401
