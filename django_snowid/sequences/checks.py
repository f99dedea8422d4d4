"""System checks of the named-sequence settings (ids E300-E309; fields use E310-E312)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.checks import CheckMessage, Tags

from ..checks import Check, error
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


#: The checks of named sequences: their ``AppConfig.ready()`` registers them.
CHECKS: tuple[Check, ...] = ((check_sequences, Tags.compatibility),)
