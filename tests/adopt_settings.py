"""Settings of the adoption tests' project (tests/test_adopt*.py run it in processes of its
own): the test suite's services, a database of its own (``<SNOWID_TEST_DB_NAME>_adopt``, or
``SNOWID_ADOPT_SQLITE``), django-taggit, and ``tests.adoptapp`` whose migrations
``SNOWID_ADOPT_MIGRATIONS`` moves to a copy (``snowid_adopt`` writes one there).
``SNOWID_ADOPT_TAGGIT_DEFAULT=1`` adds ``tests.taggitapp`` (taggit's default tags);
``SNOWID_ADOPT_AUTO_FIELD`` sets ``DEFAULT_AUTO_FIELD`` (an older project's ``AutoField``);
``SNOWID_ADOPT_CRATES=1`` adds ``tests.adoptcrateapp`` (a mixed-case table pointing at it)."""

from __future__ import annotations

import os

from tests.settings import *  # noqa: F403
from tests.settings import DATABASES, DB_NAME, DEFAULT_AUTO_FIELD

DATABASES = {"default": dict(DATABASES["default"])}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["NAME"] = os.environ["SNOWID_ADOPT_SQLITE"]
else:
    DATABASES["default"]["NAME"] = os.environ.get("SNOWID_ADOPT_DB_NAME", f"{DB_NAME}_adopt")

INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django_snowid",
    "taggit",
    "tests.adoptapp",
]
if os.environ.get("SNOWID_ADOPT_TAGGIT_DEFAULT"):
    INSTALLED_APPS.append("tests.taggitapp")
if os.environ.get("SNOWID_ADOPT_CRATES"):
    INSTALLED_APPS.append("tests.adoptcrateapp")
MIGRATION_MODULES = {}
if os.environ.get("SNOWID_ADOPT_MIGRATIONS"):
    MIGRATION_MODULES["adoptapp"] = os.environ["SNOWID_ADOPT_MIGRATIONS"]
ROOT_URLCONF = "tests.adoptapp.urls"
MIDDLEWARE: list[str] = []
DEFAULT_AUTO_FIELD = os.environ.get("SNOWID_ADOPT_AUTO_FIELD", DEFAULT_AUTO_FIELD)
