"""The adoption tests' project (tests/adopt_settings.py) in a database of its own, driven
through ``python -m django`` in processes of its own, as an operator runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from django.conf import settings

from tests.support import scratch_database_name

ROOT = Path(__file__).resolve().parent.parent


def _server() -> dict[str, Any]:
    return settings.DATABASES["default"]


def backend() -> str:
    return str(_server()["ENGINE"]).rsplit(".", 1)[-1]


class AdoptProject:
    """The project on this run's backend: a fresh database, and ``tests.adoptapp``'s
    migrations copied to ``where`` (``snowid_adopt`` writes the next one there)."""

    def __init__(
        self,
        where: Path,
        *,
        taggit_default: bool = False,
        auto_field: str | None = None,
        crates: bool = False,
    ) -> None:
        self.where = where
        self.package = f"adopt_migrations_{os.getpid()}_{id(self) % 10_000}"
        target = where / self.package
        shutil.copytree(ROOT / "tests" / "adoptapp" / "migrations", target)
        self.name = scratch_database_name("adopt")
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.adopt_settings",
            "PYTHONPATH": os.pathsep.join([str(where), str(ROOT)]),
            "SNOWID_ADOPT_MIGRATIONS": self.package,
            "SNOWID_ADOPT_SQLITE": str(where / "adopt.sqlite3"),
            "SNOWID_ADOPT_DB_NAME": self.name,
            "PYTHONUNBUFFERED": "1",
        }
        if taggit_default:
            self.env["SNOWID_ADOPT_TAGGIT_DEFAULT"] = "1"
        if auto_field:
            self.env["SNOWID_ADOPT_AUTO_FIELD"] = auto_field
        if crates:
            self.env["SNOWID_ADOPT_CRATES"] = "1"
        self.env.pop("SNOWID_TEST_RUN_ID", None)
        self._recreate()

    def switch_default_auto_field(self) -> None:
        """From here on, ``DEFAULT_AUTO_FIELD`` is ``SnowflakeAutoField``."""
        self.env.pop("SNOWID_ADOPT_AUTO_FIELD", None)

    @property
    def migrations(self) -> Path:
        return self.where / self.package

    def _admin(self, statements: list[str]) -> None:
        db = _server()
        if backend() == "postgresql":
            import psycopg

            with psycopg.connect(
                host=db["HOST"],
                port=db["PORT"],
                user=db["USER"],
                password=db["PASSWORD"],
                dbname="postgres",
                autocommit=True,
            ) as conn:
                for statement in statements:
                    conn.execute(statement)
        elif backend() == "mysql":
            import MySQLdb

            conn = MySQLdb.connect(
                host=db["HOST"], port=int(db["PORT"]), user=db["USER"], password=db["PASSWORD"]
            )
            try:
                for statement in statements:
                    conn.cursor().execute(statement)
            finally:
                conn.close()

    def _recreate(self) -> None:
        if backend() == "postgresql":
            self._admin(
                [
                    f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)',
                    f'CREATE DATABASE "{self.name}"',
                ]
            )
        elif backend() == "mysql":
            self._admin(
                [
                    f"DROP DATABASE IF EXISTS `{self.name}`",
                    f"CREATE DATABASE `{self.name}` CHARACTER SET utf8mb4",
                ]
            )

    def drop(self) -> None:
        if backend() == "postgresql":
            self._admin([f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'])
        elif backend() == "mysql":
            self._admin([f"DROP DATABASE IF EXISTS `{self.name}`"])

    def popen(self, *args: str, **options: Any) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, *args], cwd=self.where, env=self.env, text=True, **options
        )

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args],
            cwd=self.where,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def manage(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return self.run("-m", "django", *args, timeout=timeout)

    def ok(self, *args: str, timeout: float = 300) -> str:
        done = self.manage(*args, timeout=timeout)
        assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
        return done.stdout

    def sql(self, statements: list[str]) -> str:
        """Run ``statements`` on the project's database; what the last one returned."""
        return self.shell(
            "from django.db import connection\n"
            "with connection.cursor() as cursor:\n"
            f"    for statement in {statements!r}:\n"
            "        cursor.execute(statement)\n"
            "    print('ROWS', cursor.fetchall() if cursor.description else [])\n"
        ).split("ROWS ", 1)[1]

    def clone(self, where: Path) -> AdoptProject:
        """A project in ``where`` whose database is a copy of this one's (PostgreSQL)."""
        other = AdoptProject.__new__(AdoptProject)
        other.where, other.package = where, self.package
        shutil.copytree(self.migrations, where / self.package)
        other.name = f"{self.name}_{where.name[-20:]}".replace("-", "_").lower()[:60]
        other.env = {**self.env, "PYTHONPATH": os.pathsep.join([str(where), str(ROOT)])}
        other.env["SNOWID_ADOPT_DB_NAME"] = other.name
        self._admin(
            [
                f'DROP DATABASE IF EXISTS "{other.name}" WITH (FORCE)',
                f'CREATE DATABASE "{other.name}" TEMPLATE "{self.name}"',
            ]
        )
        return other

    def shell(self, code: str, *, timeout: float = 300) -> str:
        """Run ``code`` in the project (``manage.py shell -c``); its standard output."""
        return self.ok("shell", "-c", code, timeout=timeout)
