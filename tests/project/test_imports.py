"""What importing the app costs a project that does not use a part of it."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support import ROOT


def _imported_modules(code: str) -> tuple[list[str], str]:
    """The modules ``code`` imports in a fresh interpreter (``-X importtime``), and what
    it prints."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.minimal_settings",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    # Lines: "import time:   self [us] |  cumulative | imported package"
    imported = [
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]
    return imported, done.stdout


def test_snowflake_keys_and_the_admin_never_import_redis():
    modules, printed = _imported_modules(
        "import django, sys; django.setup(); import django_snowid.fields; "
        "from django_snowid import next_id; next_id(); print('django_snowid.admin' in sys.modules)"
    )
    assert "django_snowid.fields" in modules  # the listing works
    assert printed.strip() == "True"  # the admin's autodiscovery loaded our admin module
    loaded = [m for m in modules if m.split(".")[0] in ("redis", "django_redis")]
    assert loaded == []
    # Nor our own Redis stores: they load with the first lease or stream kept in Redis.
    stores = [m for m in modules if m.startswith("django_snowid.") and m.endswith(".stores.redis")]
    assert stores == []


def test_a_project_without_named_sequences_gets_no_table_check_or_module_of_them():
    # tests.minimal_settings installs django_snowid without django_snowid.sequences.
    modules, printed = _imported_modules(
        "import django; django.setup(); "
        "from django.core.management import call_command; "
        "from django.core.checks.registry import registry; "
        "from django.db import connection; "
        "call_command('migrate', verbosity=0); "
        "print(sorted(connection.introspection.table_names())); "
        "print(sorted({c.__module__ for c in registry.get_checks(True)}))"
    )
    tables, check_modules = printed.splitlines()
    assert "django_snowid_orderstreamstate" in tables  # the root app's tables are there
    assert "sequence" not in tables
    assert "django_snowid.ids.checks" in check_modules
    assert "sequences" not in check_modules
    assert [m for m in modules if m.startswith("django_snowid.sequences")] == []


def test_the_core_loads_neither_django_nor_redis():
    modules, _ = _imported_modules(
        "import pkgutil, django_snowid.core as core\n"
        "for each in pkgutil.iter_modules(core.__path__):\n"
        "    __import__(f'django_snowid.core.{each.name}')\n"
    )
    assert "django_snowid.core.order_stream" in modules  # every core module is imported
    loaded = [m for m in modules if m.split(".")[0] in ("django", "redis", "django_redis")]
    assert loaded == []
