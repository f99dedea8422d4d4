"""The system checks every store family shares: a setting naming no store, a Redis client
the chosen store cannot get, and (a database check) the tables it needs."""

from __future__ import annotations

from collections.abc import Collection

from django.apps import apps
from django.core.checks import CheckMessage
from django.db import router

from ..checks import error, redis_cache_problem
from ..conf import conf
from ..db.tables import inside_migrate, missing_message, missing_tables
from ..exceptions import SnowidError
from .base import Family
from .registry import get_store

__all__ = ["store_checks"]


def store_checks(family: Family, databases: Collection[str] | None = None) -> list[CheckMessage]:
    """Without ``databases``: an unknown choice (said alone), then the Redis client. With
    ``databases`` (``check --database``): the tables missing there, silent in ``migrate``."""
    checks = family.checks
    if databases is None and checks.unknown:
        try:
            family.choice()
        except SnowidError as exc:
            return [error(str(exc), checks.unknown)]
    if not family.in_use():
        return []
    try:
        store = get_store(family)
    except SnowidError:
        return []  # the unknown choice: another family's check says it
    if databases is None:
        problem = redis_cache_problem(conf.REDIS_ALIAS) if store.needs.redis else ""
        if not (problem and checks.redis):
            return []
        message = checks.redis_message.format(alias=conf.REDIS_ALIAS, problem=problem)
        return [error(message, checks.redis)]
    if not (store.needs.tables and checks.table) or inside_migrate():
        return []
    messages: list[CheckMessage] = []
    for label in store.needs.tables:
        model = apps.get_model(label)
        alias = router.db_for_write(model)
        if alias in databases:
            messages += [
                error(missing_message(table, alias, checks.table_consequence), checks.table)
                for table in missing_tables(alias, [model])
            ]
    return messages
