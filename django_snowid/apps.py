from __future__ import annotations

import importlib.util

from django.apps import AppConfig

from . import checks
from .conf import conf
from .ids import checks as ids_checks
from .metrics import checks as metrics_checks
from .orders import checks as orders_checks
from .workers import checks as workers_checks


class SnowidConfig(AppConfig):
    name = "django_snowid"
    label = "django_snowid"
    verbose_name = "Snowflake ids"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        for feature in (ids_checks, workers_checks, orders_checks, metrics_checks, checks):
            checks.register(feature.CHECKS)
        if conf.METRICS is True and importlib.util.find_spec("prometheus_client") is not None:
            from .metrics.collector import install  # imports prometheus_client: only then

            install()
