"""Settings of benchmarks/bench_adopt.py's project (run in processes of its own): a
PostgreSQL database of its own (``SNOWID_ADOPT_BENCH_DB_NAME``) and ``benchmarks.adoptbench``,
whose migrations ``SNOWID_ADOPT_BENCH_MIGRATIONS`` moves to a copy (``snowid_adopt`` writes
one there)."""

from __future__ import annotations

import os

SECRET_KEY = "bench"
USE_TZ = True
INSTALLED_APPS = ["django.contrib.contenttypes", "django_snowid", "benchmarks.adoptbench"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "HOST": os.environ.get("SNOWID_BENCH_PG_HOST", "127.0.0.1"),
        "PORT": os.environ.get("SNOWID_BENCH_PG_PORT", "5432"),
        "USER": os.environ.get("SNOWID_PG_USER", "postgres"),
        "NAME": os.environ.get("SNOWID_ADOPT_BENCH_DB_NAME", "snowid_adopt_bench"),
    }
}
MIGRATION_MODULES = {}
if os.environ.get("SNOWID_ADOPT_BENCH_MIGRATIONS"):
    MIGRATION_MODULES["adoptbench"] = os.environ["SNOWID_ADOPT_BENCH_MIGRATIONS"]
SNOWID_WORKER_ID = 1
SNOWID_WORKER_ID_SOURCE = "static"
