"""W031: a ``SNOWID_*`` name in the settings that is no setting of ours (a misspelling)."""

from __future__ import annotations

import difflib
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Tags

from .checks import Check, warning
from .conf import SnowidSettings

__all__ = ["CHECKS", "check_setting_names"]


def check_setting_names(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    real = [setting.name for setting in SnowidSettings.table()]
    found: list[CheckMessage] = []
    for name in sorted(dir(settings)):
        if not name.startswith("SNOWID_") or name in real:
            continue
        close = difflib.get_close_matches(name, real, n=1, cutoff=0.75)
        guess = f" Did you mean {close[0]}?" if close else ""
        found.append(
            warning(
                f"{name} is not a setting of django-snowid: it is ignored.{guess}",
                "django_snowid.W031",
            )
        )
    return found


CHECKS: tuple[Check, ...] = ((check_setting_names, Tags.compatibility),)
