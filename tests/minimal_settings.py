"""A project with Snowflake primary keys only (the default database lease) and the admin
(whose autodiscovery imports our admin module): what ``tests/project/test_imports.py`` starts in
a process of its own."""

SECRET_KEY = "minimal"
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.messages",
    "django.contrib.sessions",
    "django_snowid",
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
DEFAULT_AUTO_FIELD = "django_snowid.fields.SnowflakeAutoField"
USE_TZ = True
