"""Settings for the test suite. ``SNOWID_TEST_DB`` picks the database: sqlite (default),
postgresql or mariadb; the services' addresses come from the usual libpq/MySQL defaults
on 127.0.0.1 and can be moved with the environment variables below."""

from __future__ import annotations

import os
import tempfile
from importlib.util import find_spec
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent
SECRET_KEY = "tests-only-not-secret"
DEBUG = False
USE_TZ = True
TIME_ZONE = "UTC"

BACKEND = os.environ.get("SNOWID_TEST_DB", "sqlite")

RUN_ID = os.environ.setdefault("SNOWID_TEST_RUN_ID", f"{os.getpid()}-{os.urandom(3).hex()}")
# pytest-xdist's workers inherit the run id: each adds its own name (gw0, gw1, ...).
RUN_ID += os.environ.get("PYTEST_XDIST_WORKER", "")
# Two checkouts testing at once on one server need database names of their own
# (Django adds "test_" in front).
DB_NAME = os.environ.get("SNOWID_TEST_DB_NAME", "snowid")

if BACKEND == "sqlite":
    # A file, not :memory:, so that threads and processes share it the way they share a
    # deployed SQLite database (the in-memory test database takes table locks that never wait).
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.path.join(tempfile.gettempdir(), f"snowid-{RUN_ID}.sqlite3"),
            "OPTIONS": {"timeout": 30},
            "TEST": {"NAME": os.path.join(tempfile.gettempdir(), f"snowid-test-{RUN_ID}.sqlite3")},
        }
    }
elif BACKEND in ("postgresql", "mariadb"):

    def _server(engine: str, name: str, port: str, user: str) -> dict[str, object]:
        """A database server on 127.0.0.1 by default, moved by SNOWID_<NAME>_HOST etc."""
        env = {key: os.environ.get(f"SNOWID_{name}_{key}") for key in ("HOST", "PORT", "USER")}
        return {
            "ENGINE": f"django.db.backends.{engine}",
            "HOST": env["HOST"] or "127.0.0.1",
            "PORT": env["PORT"] or port,
            "USER": env["USER"] or user,
            "PASSWORD": os.environ.get(f"SNOWID_{name}_PASSWORD", ""),
            "NAME": DB_NAME,
        }

    if BACKEND == "postgresql":
        DATABASES = {"default": _server("postgresql", "PG", "5432", "postgres")}
        if os.environ.get("SNOWID_TEST_PG_DRIVER") == "psycopg2":
            # Django's backend on psycopg2: psycopg 3 is hidden while the backend loads
            # (the suite's own helpers keep using it).
            import sys

            hidden = sys.modules.get("psycopg")
            sys.modules["psycopg"] = None  # type: ignore[assignment]
            try:
                import django.db.backends.postgresql.base  # noqa: F401
            finally:
                if hidden is None:
                    del sys.modules["psycopg"]
                else:
                    sys.modules["psycopg"] = hidden
    else:
        DATABASES = {
            "default": {
                **_server("mysql", "MARIADB", "3306", "root"),
                "OPTIONS": {"charset": "utf8mb4"},
                "TEST": {"CHARSET": "utf8mb4", "COLLATION": "utf8mb4_unicode_ci"},
            }
        }
else:
    raise RuntimeError(f"SNOWID_TEST_DB={BACKEND!r}: expected sqlite, postgresql or mariadb.")

# A second database on the same server, for the tests of replicas and shards.
DATABASES["other"] = {**DATABASES["default"], "TEST": {**DATABASES["default"].get("TEST", {})}}
if BACKEND == "sqlite":
    DATABASES["other"]["NAME"] = os.path.join(tempfile.gettempdir(), f"snowid-{RUN_ID}-o.sqlite3")
    DATABASES["other"]["TEST"]["NAME"] = os.path.join(
        tempfile.gettempdir(), f"snowid-test-{RUN_ID}-o.sqlite3"
    )
else:
    DATABASES["other"]["NAME"] = f"{DB_NAME}_other"

# SNOWID_TEST_ISOLATION runs the order-number tests at a stricter isolation level:
# "repeatable read" (MariaDB/MySQL's server default) or "serializable".
ISOLATION = os.environ.get("SNOWID_TEST_ISOLATION")
if ISOLATION and BACKEND == "mariadb":
    for db in DATABASES.values():
        db["OPTIONS"] = {**db.get("OPTIONS", {}), "isolation_level": ISOLATION}
elif ISOLATION and BACKEND == "postgresql":
    from psycopg import IsolationLevel

    for db in DATABASES.values():
        level = IsolationLevel[ISOLATION.upper().replace(" ", "_")]
        db["OPTIONS"] = {**db.get("OPTIONS", {}), "isolation_level": level}
elif ISOLATION:
    raise RuntimeError(f"SNOWID_TEST_ISOLATION is for PostgreSQL and MariaDB, not {BACKEND}.")

# The shared Redis: tests never flush it; every run uses keys of its own (child processes
# inherit the run id through the environment).
REDIS_URL = os.environ.get("SNOWID_REDIS_URL", "redis://127.0.0.1:6379/0")
SNOWID_REDIS_KEY_PREFIX = f"snowid-test-{RUN_ID}"
SNOWID_REDIS_ALIAS = "snowid"

CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "snowid": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": REDIS_URL,
        "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 2, "SOCKET_TIMEOUT": 2},
    },
}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_snowid",
    "django_snowid.sequences",
    # django-sequences itself: the compat tests compare with it and import its rows.
    "sequences.apps.SequencesConfig",
    "tests.testapp",
    "tests.feedapp",
]
if find_spec("import_export") is not None:  # its admin's templates (the import-export extra)
    INSTALLED_APPS.append("import_export")
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "tests.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
STATIC_URL = "/static/"
DEFAULT_AUTO_FIELD = "django_snowid.fields.SnowflakeAutoField"

SNOWID_LAYOUTS = {
    "js": "js53",
    "dc": {"preset": "datacenter"},
    "sharded": "sharded",
}
SNOWID_WORKER_ID = 3
if BACKEND == "postgresql":
    # Database ids: a layout of its own (its pool holds no other test's leases).
    SNOWID_LAYOUTS["dbids"] = {"time_bits": 41, "node": {"worker": 8}, "sequence_bits": 14}
    INSTALLED_APPS.append("tests.dbidsapp")
# A shuffled alphabet of this project's own: public ids (django_snowid.ids.publicids).
SNOWID_PUBLIC_ID_ALPHABET = "3tW1w25zYqhEjNUFO94euKmsHAyPTdpk80SoglDQ7BiMGaICLXZvVxbnRJf6rc"
SNOWID_WORKER_ID_SOURCE = "static"  # the lease tests choose their own source
