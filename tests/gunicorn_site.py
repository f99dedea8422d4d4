"""A small Django site for tests/metrics/test_gunicorn.py, served by a real gunicorn:
settings, URLs and views in one module (``DJANGO_SETTINGS_MODULE=tests.gunicorn_site``).

``/ids/<n>/`` issues ``n`` Snowflake ids, ``/ticket/`` a value of the sequence "ticket"
(each answer starts with the worker's pid),
``/metrics`` is the view of docs/operations.rst (the test writes it into
``docs_example_views``, on the ``PYTHONPATH``). The database is the SQLite file
``SNOWID_SITE_DB``, migrated by the test before gunicorn starts.
"""

from __future__ import annotations

import os

from django.http import HttpRequest, HttpResponse
from django.urls import path

SECRET_KEY = "tests-only-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
USE_TZ = True
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django_snowid",
    "django_snowid.sequences",
]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("SNOWID_SITE_DB", ":memory:"),
        "OPTIONS": {"timeout": 30},
    }
}
ROOT_URLCONF = __name__
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
SNOWID_METRICS = True
SNOWID_SEQUENCES = {"ticket": {}}


def ids(request: HttpRequest, count: int) -> HttpResponse:
    """The worker's pid, then the ids."""
    import django_snowid

    return HttpResponse(" ".join(map(str, [os.getpid(), *django_snowid.next_ids(count)])))


def ticket(request: HttpRequest) -> HttpResponse:
    from django_snowid.sequences import next_value

    return HttpResponse(f"{os.getpid()} {next_value('ticket')}")


def metrics(request: HttpRequest) -> HttpResponse:
    from docs_example_views import prometheus_metrics_of_all_workers  # type: ignore

    return prometheus_metrics_of_all_workers(request)


urlpatterns = [
    path("ids/<int:count>/", ids),
    path("ticket/", ticket),
    path("metrics", metrics),
]
