from __future__ import annotations

import importlib.util

from django.apps import AppConfig
from django.db.models.signals import post_migrate, pre_migrate

from . import checks, settings_checks
from .adopt import checks as adopt_checks
from .adopt import identity as adopt_identity
from .adopt import recorder as adopt_recorder
from .conf import conf
from .ids import checks as ids_checks
from .ids.database import checks as database_ids_checks
from .ids.database import install as database_ids_install
from .metrics import checks as metrics_checks
from .metrics import multiprocess_dir
from .orders import checks as orders_checks
from .workers import checks as workers_checks
from .workers.stores import database as lease_table


class SnowidConfig(AppConfig):
    name = "django_snowid"
    label = "django_snowid"
    verbose_name = "Snowflake ids"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        for feature in (
            ids_checks,
            database_ids_checks,
            workers_checks,
            orders_checks,
            metrics_checks,
            settings_checks,
            adopt_checks,
            checks,
        ):
            checks.register(feature.CHECKS)
        # Our SQL functions exist before any migration creates a default that calls one.
        pre_migrate.connect(
            database_ids_install.pre_migrate, sender=self, dispatch_uid="snowid-database-ids-pre"
        )
        post_migrate.connect(
            database_ids_install.post_migrate, sender=self, dispatch_uid="snowid-database-ids-post"
        )
        # The way back from Snowflake ids: identities continue above the largest id.
        post_migrate.connect(
            adopt_identity.post_migrate, sender=self, dispatch_uid="snowid-adopt-identity"
        )
        # django_migrations' rows take Snowflake ids: a table made under AutoField widens.
        pre_migrate.connect(
            adopt_recorder.pre_migrate, sender=self, dispatch_uid="snowid-adopt-recorder-pre"
        )
        # migrate's own rows take ids: the lease table exists before the first is recorded.
        pre_migrate.connect(
            lease_table.pre_migrate, sender=self, dispatch_uid="snowid-lease-table-pre"
        )
        if importlib.util.find_spec("model_bakery") is not None:
            from .testing import bakery

            bakery.register()
        if conf.METRICS is True and importlib.util.find_spec("prometheus_client") is not None:
            # Both import prometheus_client: only then.

            if multiprocess_dir():
                from .metrics import multiprocess

                multiprocess.install()
            else:
                from .metrics import collector

                collector.install()
