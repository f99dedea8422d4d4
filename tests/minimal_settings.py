"""A project with Snowflake primary keys only (the default database lease): what
``tests/test_imports.py`` starts in a process of its own."""

SECRET_KEY = "minimal"
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "django_snowid"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
DEFAULT_AUTO_FIELD = "django_snowid.fields.SnowflakeAutoField"
USE_TZ = True
