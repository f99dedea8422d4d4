"""System checks of the named-sequence settings (ids E300-E309; fields use E310-E312), of
django-sequences' values not carried over yet (W800) or changed since their import (E801),
and of the mark table (E320): database checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.checks import CheckMessage, Tags
from django.db import DatabaseError, connections

from ..checks import Check, error, warning
from ..conf import conf
from ..db.tables import inside_migrate, missing_message, missing_tables
from ..exceptions import InvalidSequence
from .spec import BACKENDS, UNKNOWN, build_spec

__all__ = ["CHECKS"]


def check_sequences(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    backend = conf.SEQUENCE_BACKEND
    if backend not in BACKENDS:
        errors.append(
            error(
                f"SNOWID_SEQUENCE_BACKEND is {backend!r}: expected one of {BACKENDS}.",
                "django_snowid.E300",
            )
        )
    unknown = conf.SEQUENCES_UNKNOWN
    if unknown not in UNKNOWN:
        errors.append(
            error(
                f"SNOWID_SEQUENCES_UNKNOWN is {unknown!r}: expected one of {UNKNOWN}.",
                "django_snowid.E301",
            )
        )
    declared = conf.SEQUENCES
    if not isinstance(declared, Mapping):
        return [
            *errors,
            error(
                f"SNOWID_SEQUENCES is {declared!r}: expected a dict of name: declaration.",
                "django_snowid.E302",
            ),
        ]
    try:  # the default step bounds, as an undeclared name would get them
        build_spec("default", {})
    except InvalidSequence as exc:
        msg = str(exc).replace("SNOWID_SEQUENCES['default']", "The default step bounds")
        errors.append(error(msg, "django_snowid.E303"))
    for name, declaration in declared.items():
        try:
            build_spec(name, declaration)
        except InvalidSequence as exc:
            errors.append(error(str(exc), "django_snowid.E302"))
    return errors


def check_django_sequences_imported(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[CheckMessage]:
    """W800: django-sequences' table holds sequences above ours (``check --database``,
    ``migrate``): drawing them here before the import would issue their values again."""
    from .from_django_sequences import TABLE
    from .models import DjangoSequencesImport

    found: list[CheckMessage] = []
    for alias in databases or ():
        if _imported(alias, TABLE, DjangoSequencesImport):
            continue  # E801 reports any change since
        behind = _sequences_above_ours(alias, TABLE)
        if behind:
            shown = ", ".join(repr(name) for name in behind[:5])
            more = f" and {len(behind) - 5} more" if len(behind) > 5 else ""
            found.append(
                warning(
                    f"The database {alias!r} has {len(behind)} django-sequences sequences "
                    f"({shown}{more}) above the values of ours: drawn from "
                    "django_snowid.sequences before they are imported, they would issue "
                    "django-sequences' values again. Run `manage.py snowid_sequences "
                    "--import-django-sequences` (it can run again at any time).",
                    "django_snowid.W800",
                )
            )
    return found


def _sequences_above_ours(alias: str, table: str) -> list[str]:
    """The names in django-sequences' ``table`` whose last value is above our mark."""
    from .models import SequenceMark

    connection = connections[alias]
    qn = connection.ops.quote_name
    marks = SequenceMark._meta.db_table
    try:
        if not {table, marks} <= set(connection.introspection.table_names()):
            return []
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT s.{qn('name')} FROM {qn(table)} s LEFT JOIN {qn(marks)} m "
                f"ON m.{qn('name')} = s.{qn('name')} "
                f"WHERE m.{qn('value')} IS NULL OR m.{qn('value')} < s.{qn('last')} "
                "ORDER BY 1"
            )
            return [row[0] for row in cursor.fetchall()]
    except DatabaseError:
        return []  # not migrated yet, or unreachable: other checks say so


def _imported(alias: str, table: str, model: Any) -> bool:
    try:
        return bool(model.objects.using(alias).filter(table=table).exists())
    except DatabaseError:
        return False  # not migrated yet (E320 says so)


def check_django_sequences_unchanged(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[CheckMessage]:
    """E801: a django-sequences table changed since its import (``check --database``)."""
    from .from_django_sequences import changes_since_import

    if inside_migrate():
        return []  # the fix is no migration: let migrate run
    return [
        error(
            f"The database {alias!r}: django-sequences' table {table} changed after it was "
            f"imported, so old code is still drawing from django-sequences, and issues values "
            f"that django_snowid.sequences issues too. {what}. Stop every process that still "
            "imports from `sequences`, then run `manage.py snowid_sequences "
            "--import-django-sequences` again.",
            "django_snowid.E801",
        )
        for alias in databases or ()
        for table, what in changes_since_import(alias)
    ]


def check_mark_table(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[CheckMessage]:
    """E320: the mark table is missing (silent inside ``migrate``, which creates it)."""
    from .models import SequenceMark

    if inside_migrate():
        return []
    return [
        error(
            missing_message(table, alias, "named sequences issue no value without it"),
            "django_snowid.E320",
        )
        for alias in databases or ()
        for table in missing_tables(alias, [SequenceMark])
    ]


#: The checks of named sequences: their ``AppConfig.ready()`` registers them.
CHECKS: tuple[Check, ...] = (
    (check_sequences, Tags.compatibility),
    (check_django_sequences_imported, Tags.database),
    (check_django_sequences_unchanged, Tags.database),
    (check_mark_table, Tags.database),
)
