"""``snowid_adopt`` on the adoption project (tests/adoptapp): an AutoField key with a
foreign key, a one-to-one, an auto-created many-to-many table and a generic relation
pointing at it, switched without changing an id; killed at every step and resumed while a
writer inserts and updates through the ORM."""

from __future__ import annotations

import json
import signal

import pytest

from tests.adopt_project import AdoptProject, backend

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

HISTORICAL = """
from django.db.migrations.loader import MigrationLoader
from django.db import connection
state = MigrationLoader(connection).project_state(('adoptapp', '0001_initial')).apps
names = ('Shelf', 'Book', 'Reader', 'Note', 'ShelfLabel', 'DisplayShelf', 'Loan')
Shelf, Book, Reader, Note, Label, Display, Loan = (state.get_model('adoptapp', n) for n in names)
CT = state.get_model('contenttypes', 'ContentType')
ct = CT.objects.get_or_create(app_label='adoptapp', model='shelf')[0]
"""

POPULATE = (
    HISTORICAL
    + """
reader = Reader.objects.create(name='r')
for i in range({rows}):
    if i % 5 == 4:  # a multi-table child, and a key to it
        shelf = Display.objects.create(name=f's{{i}}', place='p')
        Loan.objects.create(shelf=shelf)
    else:
        shelf = Shelf.objects.create(name=f's{{i}}')
    Book.objects.create(shelf=shelf, title='b')
    Label.objects.create(shelf=shelf, text='l')
    reader.shelves.add(shelf)
    Note.objects.create(content_type=ct, object_id=shelf.pk, text='n')
"""
)

# Every (table, pk, key) pair: the same before and after the switch.
PAIRS = """
import json
from django.db import connection
pairs = {}
with connection.cursor() as cursor:
    for table, key in (('adoptapp_shelf', 'id'), ('adoptapp_book', 'shelf_id'),
                       ('adoptapp_shelflabel', 'shelf_id'), ('adoptapp_reader_shelves', 'shelf_id'),
                       ('adoptapp_note', 'object_id'), ('adoptapp_loan', 'shelf_id'),
                       ('adoptapp_displayshelf', 'shelf_ptr_id')):
        pk = 'shelf_ptr_id' if table == 'adoptapp_displayshelf' else 'id'
        cursor.execute(f'SELECT {pk}, {key} FROM {table} ORDER BY {pk}')
        pairs[table] = cursor.fetchall()
print('PAIRS', json.dumps(pairs))
"""

AFTER = """
from tests.adoptapp.models import Book, DisplayShelf, Loan, Note, Reader, Shelf
old_max = max(Shelf.objects.values_list('pk', flat=True))
Loan.objects.create(shelf=DisplayShelf.objects.create(name='d', place='p'))
shelf = Shelf.objects.create(name='new')
Book.objects.create(shelf=shelf, title='x')
Reader.objects.first().shelves.add(shelf)
Note.objects.create(content_object=shelf, text='n')
shelf.tags.add('red')
print('NEW', shelf.pk, old_max, list(Shelf.objects.get(pk=shelf.pk).tags.names()),
      Note.objects.filter(object_id=shelf.pk).count(), shelf.readers.count())
"""


def pairs(project: AdoptProject) -> dict[str, list[list[int]]]:
    out = project.shell(PAIRS)
    return json.loads(out.split("PAIRS ", 1)[1])


@pytest.fixture
def project(tmp_path):
    project = AdoptProject(tmp_path)
    project.ok("migrate", "-v", "0")
    yield project
    project.drop()


def check_adopted(project: AdoptProject) -> None:
    out = project.shell(AFTER)
    new, old_max = out.split("NEW ", 1)[1].split()[:2]
    assert int(new) > int(old_max) and int(new) > 2**40
    assert "['red'] 1 1" in out
    legacy = project.shell(
        "from datetime import datetime, timedelta, timezone\n"
        "from tests.adoptapp.models import Shelf\n"
        "epoch = datetime(2020, 1, 1, tzinfo=timezone.utc)\n"
        "early = epoch.replace(year=2021)\n"
        "later = datetime.now(timezone.utc) + timedelta(hours=1)\n"
        "print('AFTER', Shelf.objects.filter(pk__created_after=epoch).count(),\n"
        "      'BEFORE', Shelf.objects.filter(pk__created_before=later).count(),\n"
        "      'EARLY', Shelf.objects.filter(pk__created_before=early).count(),\n"
        "      'ALL', Shelf.objects.count())\n"
    )
    total = int(legacy.split("ALL ")[1])
    assert f"AFTER 2 BEFORE {total} EARLY 0" in legacy, legacy  # the new shelves
    decoded = project.manage("snowid_decode", "1")
    assert "legacy id, from before Snowflake ids were adopted" in decoded.stdout + decoded.stderr
    assert "2020-01-01" not in decoded.stdout
    drift = project.manage("makemigrations", "--check", "--dry-run")
    assert drift.returncode == 0, drift.stdout + drift.stderr
    assert "No changes detected" in drift.stdout


def test_the_plan_names_every_column_lock_and_estimate(project):
    project.shell(POPULATE.format(rows=5))
    out = project.ok("snowid_adopt", "adoptapp.Shelf")
    for column in (
        "adoptapp_shelf.id  pk",
        "adoptapp_book.shelf_id  foreign key",
        "adoptapp_shelflabel.shelf_id  one-to-one",
        "adoptapp_reader_shelves.shelf_id  many-to-many",
        "adoptapp_note.object_id  generic relation",
        "adoptapp_displayshelf.shelf_ptr_id  one-to-one",
        "adoptapp_loan.shelf_id  foreign key",
    ):
        assert column in out, out
    assert "adoptapp_reader.shelves" not in out  # a many-to-many field has no column
    assert "No id changes. Largest id now: 5" in out
    assert "lock: " in out and "0002_adopt_snowflake_ids" in out
    if backend() == "postgresql":
        assert "integer -> bigint  5 rows" in out
        assert "CREATE INDEX CONCURRENTLY" in out and "sequence public.adoptapp_shelf_id_seq" in out
    elif backend() == "mysql":
        assert "ALGORITHM=COPY, LOCK=SHARED" in out
    else:
        assert "write lock for the whole rebuild" in out
    # The plan changes nothing.
    assert not list(project.migrations.glob("0002_*"))
    plan = json.loads(project.ok("snowid_adopt", "adoptapp.Shelf", "--json"))
    assert plan["facts"]["old_max"] == 5


def test_execute_keeps_every_id_and_leaves_no_drift(project):
    """``--execute`` keeps every id and pair, and leaves no migration to make.

    Slow: each command a Django process of its own."""
    project.shell(POPULATE.format(rows=30))
    before = pairs(project)
    out = project.ok("snowid_adopt", "adoptapp.Shelf", "--execute", "--batch-size", "7")
    assert "done; ids below" in out
    assert pairs(project) == before
    check_adopted(project)
    again = project.ok("snowid_adopt", "adoptapp.Shelf", "--execute")
    assert "switched to Snowflake ids already" in again


# The foreign keys of each of the project's tables: (column, how many constraints).
KEYS = """
from django.db import connection
with connection.cursor() as cursor:
    for table in sorted(connection.introspection.table_names(cursor)):
        if not table.startswith('adoptapp_'):
            continue
        keys = {}
        for name, c in connection.introspection.get_constraints(cursor, table).items():
            if c['foreign_key']:
                keys.setdefault(','.join(c['columns']), []).append(name)
        print('KEYS', table, sorted((column, len(names)) for column, names in keys.items()))
"""


def test_the_plain_migration_follows_every_level_once(project):
    """The plain migration converts the keys to a multi-table child's key too, and leaves
    each key column one foreign key constraint.

    Slow: each command a Django process of its own."""
    project.shell(POPULATE.format(rows=10))
    before = pairs(project)
    keys = project.shell(KEYS)
    out = project.ok("snowid_adopt", "adoptapp.Shelf", "--execute", "--plain")
    assert "done; ids below" in out
    assert pairs(project) == before
    assert project.shell(KEYS) == keys
    check_adopted(project)


def test_a_label_that_is_no_model_is_refused(project):
    done = project.manage("snowid_adopt", "adoptapp.Nothing")
    assert done.returncode == 1
    assert "'adoptapp.Nothing' is not an installed model" in done.stderr


WRITER = (
    HISTORICAL
    + """
import random, sys, time
from django.db import OperationalError, connection
errors = 0
written = 0
with connection.cursor() as cursor:
    cursor.execute("SET lock_timeout = '5s'")
while True:
    try:
        shelf = Shelf.objects.create(name='w')
        Book.objects.create(shelf=shelf, title='w')
        Note.objects.create(content_type=ct, object_id=shelf.pk, text='w')
        Book.objects.filter(pk=Book.objects.order_by('?').values('pk')[:1]).update(title='u')
        written += 1
    except OperationalError as exc:
        if 'lock timeout' not in str(exc):
            errors += 1
            print('ERROR', exc, flush=True)
    except Exception as exc:
        errors += 1
        print('ERROR', type(exc).__name__, exc, flush=True)
    print('WROTE', written, 'ERRORS', errors, flush=True)
    time.sleep(0.01)
"""
)


def test_killed_at_every_step_and_resumed_under_writes(project):
    """Slow: the switch is killed at each of its steps in turn and started again, a new
    Django process each time, while a writer process goes on inserting."""
    if backend() != "postgresql":
        pytest.skip("the online switch is PostgreSQL's")
    project.shell(POPULATE.format(rows=40))
    writer = project.popen(
        "-m", "django", "shell", "-c", WRITER, stdout=subprocess_pipe(), stderr=subprocess_pipe()
    )
    try:
        steps = 0
        kills = 0
        while True:
            run = project.popen(
                "-m",
                "django",
                "snowid_adopt",
                "adoptapp.Shelf",
                "--execute",
                "--keep-sequence",
                "--batch-size",
                "5",
                "--throttle",
                "0.02",
                stdout=subprocess_pipe(),
                stderr=subprocess_pipe(),
            )
            target = kills + 1
            for line in run.stdout:
                if line.startswith("step "):
                    number, steps = map(int, line.split()[1].rstrip(":").split("/"))
                    if number >= target:
                        run.send_signal(signal.SIGKILL)
                        break
                if "done; ids below" in line:
                    break
            run.wait(120)
            if run.returncode == 0:
                break
            assert run.returncode == -signal.SIGKILL, run.stderr.read()
            kills += 1
            assert kills <= steps + 1
        assert kills >= steps - 2, (kills, steps)
    finally:
        writer.send_signal(signal.SIGTERM)
        out, err = writer.communicate(30)
    # The last whole line (SIGTERM may cut the one being printed).
    last = [x for x in out.splitlines() if x.startswith("WROTE") and " ERRORS " in x][-1]
    assert "ERRORS 0" in last, out[-2000:] + err[-2000:]
    assert int(last.split()[1]) > 10
    # Every key valid, every row of the writer kept.
    check = project.shell(
        "from django.db import connection\n"
        "with connection.cursor() as c:\n"
        "    c.execute('SELECT count(*) FROM adoptapp_book b LEFT JOIN adoptapp_shelf s '\n"
        "              'ON s.id = b.shelf_id WHERE s.id IS NULL')\n"
        "    print('ORPHANS', c.fetchone()[0])\n"
        '    c.execute("SELECT count(*) FROM pg_constraint WHERE NOT convalidated "\n'
        "              \"AND conrelid::regclass::text LIKE 'adoptapp%%'\")\n"
        "    print('INVALID', c.fetchone()[0])\n"
    )
    assert "ORPHANS 0" in check and "INVALID 0" in check
    check_adopted(project)


def subprocess_pipe() -> int:
    import subprocess

    return subprocess.PIPE


def test_undo_before_the_swap(project):
    """``--undo`` after a switch killed before its swap: the ids and pairs as they were.

    Slow: each command a Django process of its own."""
    if backend() != "postgresql":
        pytest.skip("the online switch is PostgreSQL's")
    project.shell(POPULATE.format(rows=10))
    before = pairs(project)
    run = project.popen(
        "-m",
        "django",
        "snowid_adopt",
        "adoptapp.Shelf",
        "--execute",
        "--batch-size",
        "2",
        "--throttle",
        "0.05",
        stdout=subprocess_pipe(),
        stderr=subprocess_pipe(),
    )
    for line in run.stdout:
        if line.startswith("step ") and "concurrently" in line:
            run.send_signal(signal.SIGKILL)
            break
    run.wait(60)
    out = project.ok("snowid_adopt", "adoptapp.Shelf", "--undo")
    assert "undone" in out and "0002_adopt_snowflake_ids" in out
    assert pairs(project) == before
    columns = project.shell(
        "from django.db import connection\n"
        "with connection.cursor() as c:\n"
        '    c.execute("SELECT count(*) FROM information_schema.columns "\n'
        "              \"WHERE column_name LIKE '%%_snowid'\")\n"
        "    print('SHADOWS', c.fetchone()[0])\n"
    )
    assert "SHADOWS 0" in columns
    assert not list(project.migrations.glob("0002_*"))


# Each batch of the backfill, a writer adds a row to the table being copied.
CHASED = """
from django.db import connection
from django_snowid.adopt.run import current_plan, execute
plan, _ = current_plan('adoptapp.Shelf', using='default', batch_size=3)
calls = []
def insert_meanwhile(table, done, total):
    calls.append(table)
    if len(calls) > 100:
        raise SystemExit('the backfill chases new rows: ' + ' '.join(calls[-3:]))
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO adoptapp_book (shelf_id, title) "
                       "SELECT min(id), 'm' FROM adoptapp_shelf")
execute('adoptapp.Shelf', plan, using='default', batch_size=3, throttle=0,
        lock_timeout_ms=500, out=print, progress=insert_meanwhile)
print('BATCHES', len(calls))
"""


def test_the_backfill_stops_at_the_rows_it_found(project):
    """Rows written after the trigger was made have their shadows already: the backfill
    copies up to the largest key it found, not after every new row."""
    if backend() != "postgresql":
        pytest.skip("the online switch is PostgreSQL's")
    project.shell(POPULATE.format(rows=10))
    out = project.shell(CHASED)
    batches = int(out.split("BATCHES ")[1])
    assert batches <= 30, out  # about 5 tables of 10 to 20 rows, 3 a batch
    check = project.shell(
        "from django.db import connection\n"
        "with connection.cursor() as c:\n"
        "    c.execute('SELECT count(*) FROM adoptapp_book b JOIN adoptapp_shelf s '\n"
        "              'ON s.id = b.shelf_id')\n"
        "    print('BOOKS', c.fetchone()[0])\n"
    )
    assert f"BOOKS {10 + batches}" in check, check


# Django before 4.1 made serial columns (a sequence owned by the column, its nextval the
# default), not identity columns: Shelf's key as such a database has it.
SERIAL = """
from django.db import connection
with connection.cursor() as c:
    c.execute('ALTER TABLE adoptapp_shelf ALTER COLUMN id DROP IDENTITY')
    c.execute('CREATE SEQUENCE adoptapp_shelf_id_seq OWNED BY adoptapp_shelf.id')
    c.execute("ALTER TABLE adoptapp_shelf ALTER COLUMN id SET DEFAULT "
              "nextval('adoptapp_shelf_id_seq')")
    c.execute("SELECT setval('adoptapp_shelf_id_seq', (SELECT max(id) FROM adoptapp_shelf))")
    c.execute("SELECT pg_get_serial_sequence('adoptapp_shelf', 'id'), attidentity "
              "FROM pg_attribute WHERE attrelid = 'adoptapp_shelf'::regclass "
              "AND attname = 'id'")
    print('SERIAL', c.fetchone())
"""


@pytest.mark.parametrize("how", [(), ("--plain",)], ids=["online", "plain"])
def test_a_serial_column_of_an_older_django_is_adopted(project, how):
    """A serial key (Django before 4.1) is adopted, online and by the plain migration.

    Slow: each command a Django process of its own."""
    if backend() != "postgresql":
        pytest.skip("serial columns are PostgreSQL's")
    project.shell(POPULATE.format(rows=12))
    assert "SERIAL ('public.adoptapp_shelf_id_seq', '')" in project.shell(SERIAL)
    before = pairs(project)
    plan = project.ok("snowid_adopt", "adoptapp.Shelf", *how)
    assert "sequence public.adoptapp_shelf_id_seq" in plan
    out = project.ok("snowid_adopt", "adoptapp.Shelf", "--execute", *how)
    assert "done; ids below" in out
    assert pairs(project) == before
    check_adopted(project)
    left = project.shell(
        "from django.db import connection\n"
        "with connection.cursor() as c:\n"
        '    c.execute("SELECT column_default FROM information_schema.columns "\n'
        "              \"WHERE table_name = 'adoptapp_shelf' AND column_name = 'id'\")\n"
        "    print('DEFAULT', c.fetchone()[0])\n"
        "    c.execute(\"SELECT count(*), string_agg(relname, ',') FROM pg_class \"\n"
        "              \"WHERE relkind = 'S' AND relname LIKE 'adoptapp_shelf_id%%'\")\n"
        "    print('SEQUENCES', *c.fetchone())\n"
    )
    assert "DEFAULT None" in left and "SEQUENCES 0" in left, left
