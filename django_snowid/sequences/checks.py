"""System checks of the named-sequence settings (ids E300-E309; fields use E310-E312), and
of django-sequences' values not carried over yet (W800, a database check)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.checks import CheckMessage, Tags
from django.db import DatabaseError, connections

from ..checks import Check, error, warning
from ..conf import conf
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
    from .models import SequenceMark

    found: list[CheckMessage] = []
    for alias in databases or ():
        connection = connections[alias]
        qn = connection.ops.quote_name
        marks = SequenceMark._meta.db_table
        try:
            tables = set(connection.introspection.table_names())
            if not {TABLE, marks} <= tables:
                continue
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT s.{qn('name')} FROM {qn(TABLE)} s LEFT JOIN {qn(marks)} m "
                    f"ON m.{qn('name')} = s.{qn('name')} "
                    f"WHERE m.{qn('value')} IS NULL OR m.{qn('value')} < s.{qn('last')} "
                    "ORDER BY 1"
                )
                behind = [row[0] for row in cursor.fetchall()]
        except DatabaseError:
            continue  # not migrated yet, or unreachable: other checks say so
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


#: The checks of named sequences: their ``AppConfig.ready()`` registers them.
CHECKS: tuple[Check, ...] = (
    (check_sequences, Tags.compatibility),
    (check_django_sequences_imported, Tags.database),
)
