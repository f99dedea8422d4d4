"""What our generated-value fields share in ``deconstruct()``."""

from __future__ import annotations

from typing import Any


def drop_generated_defaults(kwargs: dict[str, Any], *, primary_key: bool = False) -> None:
    """Our fields default to ``unique=True, editable=False``: write only what differs.

    ``Field.deconstruct()`` writes what differs from *its* defaults (``unique=False``,
    ``editable=True``); turn that around.
    """
    if primary_key:
        kwargs.pop("unique", None)  # implied by primary_key
    elif kwargs.get("unique") is True:
        del kwargs["unique"]
    else:
        kwargs["unique"] = False
    if kwargs.get("editable") is False:
        del kwargs["editable"]
    else:
        kwargs["editable"] = True
