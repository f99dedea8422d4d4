"""A project made under ``AutoField`` (its ``django_migrations`` and auto-created
many-to-many tables 32-bit, django-snowid not installed yet) that switches
``DEFAULT_AUTO_FIELD`` to ``SnowflakeAutoField``: ``migrate``, ``add()`` on an existing
many-to-many, ``snowid_adopt --execute`` whose last step fails once and is resumed, and a
rerun, on every database."""

from __future__ import annotations

import pytest

from tests.adopt.test_adopt import POPULATE, check_adopted, pairs
from tests.adopt_project import AdoptProject, backend

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

#: The older project: every app but ours, migrated under AutoField, in one process.
MIGRATE_OLD = """
from django.core.management import call_command
for app in ('contenttypes', 'auth', 'taggit', 'adoptapp'):
    call_command('migrate', app, verbosity=0)
"""

TYPES = """
from django.db import connection
from django_snowid.adopt.schema import column_types
for table in ('django_migrations', 'adoptapp_reader_shelves'):
    print('TYPE', table, column_types(connection, table)['id'][0] or 'integer')
"""

# A many-to-many row added by the new code to a table made under AutoField.
ADD = """
from tests.adoptapp.models import Reader, Shelf
reader = Reader.objects.create(name='new reader')
reader.shelves.add(*Shelf.objects.order_by('pk')[:2])
print('ADDED', reader.shelves.count())
"""

# Recording a migration fails while adopt_fail_once holds a row (the last step fails).
FAIL_ONCE = {
    "postgresql": [
        "CREATE TABLE adopt_fail_once (x integer)",
        "INSERT INTO adopt_fail_once VALUES (1)",
        "CREATE FUNCTION adopt_fail_once() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF EXISTS (SELECT 1 FROM adopt_fail_once) THEN RAISE EXCEPTION 'recording refused'; "
        "END IF; RETURN NEW; END $$",
        "CREATE TRIGGER adopt_fail_once BEFORE INSERT ON django_migrations "
        "FOR EACH ROW EXECUTE FUNCTION adopt_fail_once()",
    ],
    "mysql": [
        "CREATE TABLE adopt_fail_once (x integer)",
        "INSERT INTO adopt_fail_once VALUES (1)",
        "CREATE TRIGGER adopt_fail_once BEFORE INSERT ON django_migrations FOR EACH ROW "
        "BEGIN IF (SELECT COUNT(*) FROM adopt_fail_once) > 0 THEN "
        "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'recording refused'; END IF; END",
    ],
    "sqlite3": [
        "CREATE TABLE adopt_fail_once (x integer)",
        "INSERT INTO adopt_fail_once VALUES (1)",
        "CREATE TRIGGER adopt_fail_once BEFORE INSERT ON django_migrations "
        "WHEN EXISTS (SELECT 1 FROM adopt_fail_once) "
        "BEGIN SELECT RAISE(ABORT, 'recording refused'); END",
    ],
}


@pytest.fixture
def older(tmp_path):
    project = AdoptProject(tmp_path, auto_field="django.db.models.AutoField")
    project.shell(MIGRATE_OLD)
    project.shell(POPULATE.format(rows=6))
    yield project
    project.drop()


def test_an_older_project_switches_default_auto_field(older):
    """An older project's whole journey, each step a ``manage.py`` process of its own.

    Slow: about fifteen commands, each starting Django in a new process."""
    if backend() != "sqlite3":  # the premise: Django's own tables are 32-bit
        types = older.shell(TYPES)
        assert "django_migrations int" in types and "adoptapp_reader_shelves int" in types
    older.switch_default_auto_field()

    # Installing the app and migrating records Django's own rows.
    older.ok("migrate", "-v", "0")
    assert "ADDED 2" in older.shell(ADD)
    before = pairs(older)
    if backend() != "sqlite3":
        checked = older.manage("check", "--database", "default")
        assert "adoptapp.Shelf: (django_snowid.W910)" in checked.stderr, checked.stderr

    # The plan names the many-to-many table's own key; a through model is no target.
    plan = older.ok("snowid_adopt", "adoptapp.Shelf")
    assert "adoptapp_reader_shelves.id  many-to-many's own key" in plan, plan
    through = older.manage("snowid_adopt", "adoptapp.Reader_shelves")
    assert through.returncode == 1
    assert "auto-created many-to-many table of adoptapp.Reader.shelves" in through.stderr

    # The last step fails once; the journal stays running and the next run finishes it.
    older.sql(FAIL_ONCE[backend()])
    failed = older.manage("snowid_adopt", "adoptapp.Shelf", "--execute")
    assert failed.returncode == 1 and "recording refused" in failed.stdout + failed.stderr
    older.sql(["DELETE FROM adopt_fail_once"])
    assert "Resuming the switch that stopped" in older.ok("snowid_adopt", "adoptapp.Shelf")
    assert "done; ids below" in older.ok("snowid_adopt", "adoptapp.Shelf", "--execute")
    again = older.ok("snowid_adopt", "adoptapp.Shelf", "--execute")
    assert "switched to Snowflake ids already" in again

    assert pairs(older) == before
    check_adopted(older)
    assert "ADDED 2" in older.shell(ADD)
    if backend() != "sqlite3":
        assert "TYPE adoptapp_reader_shelves bigint" in older.shell(TYPES)
        checked = older.manage("check", "--database", "default")
        assert "W910" not in checked.stderr, checked.stderr
