"""A ``CheckConstraint`` that every supported Django builds the same way: its condition is
``condition=`` from Django 5.1 on, ``check=`` before (removed in 6.0)."""

from __future__ import annotations

from typing import Any

import django
from django.db import models

__all__ = ["check_constraint"]


def check_constraint(condition: Any, name: str) -> models.CheckConstraint:
    keyword = "condition" if django.VERSION >= (5, 1) else "check"
    return models.CheckConstraint(**{keyword: condition, "name": name})
