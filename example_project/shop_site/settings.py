"""Settings of the example shop: SQLite, Snowflake primary keys everywhere."""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = os.environ.get("SHOP_SECRET_KEY", "example-project-not-secret")
DEBUG = os.environ.get("SHOP_DEBUG", "1") == "1"
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
USE_TZ = True
TIME_ZONE = "Europe/Paris"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_snowid",
    "django_snowid.sequences",  # named sequences: the shop's invoice numbers
    "shop",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
ROOT_URLCONF = "shop_site.urls"
WSGI_APPLICATION = "shop_site.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("SHOP_DB_PATH", BASE_DIR / "db.sqlite3"),
    }
}
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

# Every model of this project without an explicit pk gets a Snowflake id.
DEFAULT_AUTO_FIELD = "django_snowid.fields.SnowflakeAutoField"

# django-snowid: the defaults, written out.
SNOWID_EPOCH = "2020-01-01T00:00:00Z"
SNOWID_LAYOUT = "datacenter"  # 41 bits of ms | datacenter 5 | machine 5 | sequence 12
SNOWID_LAYOUTS = {"public": "js53"}  # ids safe to hand to JavaScript
# Each process leases its machine id from the database (the default source: every host
# sharing the database gets distinct ones); the datacenter is fixed per deployment.
SNOWID_WORKER_ID = {"datacenter": 1}
SNOWID_WORKER_ID_SOURCE = "database"
SNOWID_CLOCK_BACKWARDS_TOLERANCE_MS = 5

# Order numbers. The embedded default keeps the sequence in this SQLite database; set
# SHOP_REDIS_URL (e.g. redis://127.0.0.1:6379/0) to keep it in Redis instead, through a
# cache alias of its own ("snowid", as in the Quick start): the project's default cache
# stays what it was, and SNOWID_REDIS_ALIAS names the alias.
SNOWID_ORDER_ZONE = "UTC"  # stems are read in one zone without daylight saving
if os.environ.get("SHOP_REDIS_URL"):
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "snowid": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": os.environ["SHOP_REDIS_URL"],
        },
    }
    SNOWID_REDIS_ALIAS = "snowid"
    SNOWID_ORDER_BACKEND = "redis"
else:
    SNOWID_ORDER_BACKEND = "database"

# Named sequences: invoice numbers that start again at 1 every day (INV-20261128-000001),
# kept in this database beside the rows they number.
SNOWID_SEQUENCES = {"invoice": {"kind": "daily", "zone": "UTC"}}

# Orders route to shard databases by the low bits of their number, which equal the low
# bits of their user id (see shop/routing.py). One database here; list more to shard.
SHOP_ORDER_SHARDS = ["default"]
DATABASE_ROUTERS = ["shop.routing.OrderShardRouter"]
