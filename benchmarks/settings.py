"""Settings for benchmarks/bench_orm.py; SNOWID_BENCH_DB picks the database."""

from __future__ import annotations

import os
import tempfile

SECRET_KEY = "bench"
USE_TZ = True
INSTALLED_APPS = ["django_snowid", "django_snowid.sequences", "benchmarks.benchapp", "sequences"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

BACKEND = os.environ.get("SNOWID_BENCH_DB", "sqlite")
if BACKEND == "sqlite":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.path.join(tempfile.gettempdir(), "snowid-bench.sqlite3"),
            "TEST": {"NAME": os.path.join(tempfile.gettempdir(), "snowid-bench-test.sqlite3")},
        }
    }
elif BACKEND == "postgresql":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            # bench_remote.py reaches PostgreSQL through a relay one network hop away.
            "HOST": os.environ.get("SNOWID_BENCH_PG_HOST", "127.0.0.1"),
            "PORT": os.environ.get("SNOWID_BENCH_PG_PORT", "5432"),
            "USER": os.environ.get("SNOWID_PG_USER", "postgres"),
            "NAME": os.environ.get("SNOWID_BENCH_DB_NAME", "snowid_bench"),
        }
    }
elif BACKEND == "mariadb":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.mysql",
            "HOST": "127.0.0.1",
            "PORT": "3306",
            "USER": "root",
            "PASSWORD": "",
            "NAME": "snowid_bench",
        }
    }
else:
    raise RuntimeError(f"SNOWID_BENCH_DB={BACKEND!r}")

REDIS_URL = os.environ.get("SNOWID_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "snowid": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": REDIS_URL},
}
SNOWID_REDIS_ALIAS = "snowid"
SNOWID_REDIS_KEY_PREFIX = os.environ.setdefault(
    "SNOWID_BENCH_PREFIX", f"snowid-bench-{os.getpid()}"
)
SNOWID_ORDER_BACKEND = "redis"
#: The key of benchapp's concealed order numbers (a benchmark's, not a secret).
SNOWID_ORDER_KEY = "benchmark-key-of-concealed-order-numbers"
