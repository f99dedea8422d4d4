"""Database ids: a PostgreSQL column default that issues ids of the field's
layout from node values reserved for the database, beside Python's own inserts."""

from __future__ import annotations

import io
import json
import threading

import django
import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, models
from django.test.utils import CaptureQueriesContext, isolate_apps

from django_snowid.fields import SnowflakeAutoField, SnowflakeField
from django_snowid.ids.database.checks import (
    check_database_defaults,
    check_database_nodes,
    field_messages,
)
from django_snowid.ids.database.geometry import Geometry
from django_snowid.settings_layouts import get_layout
from django_snowid.workers.pool import pool_for
from tests.support import Children

ON_POSTGRESQL = django_settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
postgresql_only = pytest.mark.skipif(not ON_POSTGRESQL, reason="database ids need PostgreSQL")

TABLE = "dbidsapp_reading"
SEQUENCE_BITS = 14
NODE_MASK = 255
RESERVED = {255, 254, 253, 252}


def _psycopg():
    """A connection of its own to the test database, in autocommit."""
    import psycopg

    db = connection.settings_dict
    return psycopg.connect(
        host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"], autocommit=True
    )


def _node(value: int) -> int:
    return (value >> SEQUENCE_BITS) & NODE_MASK


# ------------------------------------------------------------------- checks (any backend)
@isolate_apps("tests.testapp")
def test_the_option_is_refused_where_the_database_cannot_issue_ids():
    class Meter(models.Model):
        id = SnowflakeAutoField(primary_key=True, database_ids=True)

        class Meta:
            app_label = "testapp"

    ids = [m.id for m in field_messages([Meter._meta.get_field("id")])]
    if django.VERSION < (5, 0):
        expected = ["django_snowid.E600"]
    else:
        expected = {
            "sqlite": ["django_snowid.E601", "django_snowid.E601"],  # default and other
            "mysql": ["django_snowid.E602", "django_snowid.E602"],
            "postgresql": [],
        }[connection.vendor]
    assert ids == expected


@isolate_apps("tests.testapp")
def test_the_option_is_refused_with_a_shard_source():
    class Parcel(models.Model):
        owner_id = models.BigIntegerField()
        code = SnowflakeField(layout="sharded", shard_from="owner_id", database_ids=True)

        class Meta:
            app_label = "testapp"

    ids = [m.id for m in field_messages([Parcel._meta.get_field("code")])]
    assert ids == ["django_snowid.E607"]


def test_a_bad_number_of_database_nodes_is_refused(settings):
    settings.SNOWID_DATABASE_NODES = 0
    assert [m.id for m in check_database_nodes()] == ["django_snowid.E604"]


@isolate_apps("tests.testapp")
def test_the_option_round_trips_through_migrations():
    field = SnowflakeField(layout="js", database_ids=True)
    _, _path, args, kwargs = field.deconstruct()
    assert kwargs["database_ids"] is True
    rebuilt = SnowflakeField(*args, **kwargs)
    if django.VERSION >= (5, 0):
        key = Geometry.of(get_layout("js")).key
        assert kwargs["db_default"].geometry.key == key
        assert rebuilt.db_default == field.db_default
    assert rebuilt.deconstruct()[3] == kwargs


# ------------------------------------------------------------------- PostgreSQL
@postgresql_only
@pytest.mark.django_db
def test_the_pool_of_processes_leaves_the_reserved_node_values_out():
    pool = pool_for(get_layout("dbids"), 0)
    assert pool.reserved == 4
    assert pool.size == 256 - 4
    assert pool.database_nodes() == [255, 254, 253, 252]
    # A layout of another pool, without database ids, keeps every value.
    assert pool_for(get_layout("js"), 0).size == 32


@postgresql_only
@pytest.mark.django_db
def test_the_reservations_are_listed_like_leases(settings):
    settings.SNOWID_WORKER_ID_SOURCE = "database"
    out = io.StringIO()
    call_command("snowid_workers", "--json", stdout=out)
    rows = {row["worker_id"]: row for row in json.loads(out.getvalue())}
    assert rows[255]["owner"].startswith("database:default ")
    # Each migrated database its own value (the test run migrates "other" when a test
    # asks for it).
    assert {w for w, row in rows.items() if row["owner"].startswith("database:")} <= RESERVED
    assert rows[255]["pool"] == "node-bits-14-8"
    assert rows[255]["expires_in_s"] == "never"


@postgresql_only
@pytest.mark.django_db
def test_the_reservations_are_listed_whatever_the_worker_id_source(settings):
    settings.SNOWID_WORKER_ID_SOURCE = "static"
    out = io.StringIO()
    call_command("snowid_workers", stdout=out)
    text = out.getvalue()
    assert "the worker id is fixed" in text
    assert "Node values reserved for databases" in text and "database:default" in text


@postgresql_only
@pytest.mark.django_db
def test_a_fixed_worker_id_among_the_reserved_values_is_refused(settings):
    settings.SNOWID_WORKER_ID = 254
    assert "django_snowid.E606" in [m.id for m in check_database_nodes()]
    settings.SNOWID_WORKER_ID = 3
    settings.SNOWID_DATABASE_NODES = 1  # two databases (default, other) need two
    assert [m.id for m in check_database_nodes()] == ["django_snowid.E605"]


@postgresql_only
@pytest.mark.django_db
def test_django_inserts_keep_the_python_path():
    from tests.dbidsapp.models import Label, Reading

    with CaptureQueriesContext(connection) as queries:
        reading = Reading.objects.create(value=1)
        Reading.objects.bulk_create([Reading(value=i) for i in range(50)])
        label = Label.objects.create(name="a")
    assert len(queries) == 3
    assert all("RETURNING" not in q["sql"] for q in queries.captured_queries)
    assert _node(reading.pk) == 3 and _node(label.code) == 3  # SNOWID_WORKER_ID
    assert all(_node(r.pk) == 3 for r in Reading.objects.exclude(pk=reading.pk))


@postgresql_only
@pytest.mark.django_db
def test_a_row_inserted_without_the_id_gets_one_from_the_database():
    from tests.dbidsapp.models import Reading

    before = get_layout("dbids").tick_at(django.utils.timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {TABLE} (value, source) VALUES (1, 'sql') RETURNING id")
        (value,) = cursor.fetchone()
    decoded = Reading._meta.pk.decode(value)
    assert decoded.node == 255  # the first database's: the pool's top value
    assert before <= decoded.tick <= get_layout("dbids").tick_at(django.utils.timezone.now())
    assert Reading.objects.get(pk=value).source == "sql"


@postgresql_only
@pytest.mark.django_db(databases=["default", "other"])
def test_each_database_issues_from_its_own_node_value():
    from django.db import connections

    found = {}
    for alias in ("default", "other"):
        with connections[alias].cursor() as cursor:
            cursor.execute(f"INSERT INTO {TABLE} (value, source) VALUES (1, 'sql') RETURNING id")
            found[alias] = _node(cursor.fetchone()[0])
    assert found == {"default": 255, "other": 254}


def _insert_many(rows: int, start: threading.Barrier, out: list[list[int]]) -> None:
    with _psycopg() as conn:
        start.wait()
        ids = []
        for i in range(rows):
            ids.append(
                conn.execute(
                    f"INSERT INTO {TABLE} (value, source) VALUES (%s, 'conn') RETURNING id", [i]
                ).fetchone()[0]
            )
        out.append(ids)


@postgresql_only
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_eight_connections_inserting_at_once_never_share_an_id():
    start = threading.Barrier(8)
    out: list[list[int]] = []
    threads = [threading.Thread(target=_insert_many, args=(1500, start, out)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(out) == 8
    every = [value for ids in out for value in ids]
    assert len(set(every)) == len(every) == 8 * 1500
    for ids in out:
        assert ids == sorted(ids) and len(set(ids)) == len(ids)  # increasing per connection
    assert {_node(value) for value in every} == {255}
    ticks = {value >> (SEQUENCE_BITS + 8) for value in every}
    assert len(ticks) > 1  # the ids crossed ticks: the helper moved the sequence


def _python_writer(ready, stop, queue) -> None:
    from django.db import connection as child_connection

    from tests.dbidsapp.models import Reading

    made = 0
    try:
        Reading.objects.create(value=-1, source="python")
        ready.release()
        while not stop.is_set():
            Reading.objects.create(value=made, source="python")
            Reading.objects.bulk_create(
                [Reading(value=made + i, source="python") for i in range(500)]
            )
            made += 501
        queue.put(("ok", made))
    except Exception as exc:  # reported to the test
        queue.put(("error", repr(exc)))
    finally:
        child_connection.close()


@postgresql_only
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_copy_and_insert_select_beside_python_processes(settings):
    """INSERT ... SELECT of 100,000 rows and COPY of 1,000,000 leaving out the pk, while
    4 processes create() and bulk_create() (leasing worker ids from the database)."""
    settings.SNOWID_WORKER_ID_SOURCE = "database"
    layout = get_layout("dbids")
    first_tick = layout.tick_at(django.utils.timezone.now())
    with Children() as children:
        ready = children.context.Semaphore(0)
        stop = children.context.Event()
        for _ in range(4):
            children.start(_python_writer, ready, stop, children.queue)
        for _ in range(4):
            assert ready.acquire(timeout=60)
        with _psycopg() as conn:
            conn.execute(
                f"INSERT INTO {TABLE} (value, source) "
                "SELECT g, 'select' FROM generate_series(1, 100000) g"
            )
            with (
                conn.cursor() as cursor,
                cursor.copy(f"COPY {TABLE} (value, source) FROM STDIN") as copy,
            ):
                for chunk in range(0, 1_000_000, 100_000):
                    copy.write("".join(f"{i}\tcopy\n" for i in range(chunk, chunk + 100_000)))
        stop.set()
        results = children.results()
    assert all(status == "ok" for status, _ in results), results
    last_tick = layout.tick_at(django.utils.timezone.now())
    with _psycopg() as conn:
        total, distinct = conn.execute(
            f"SELECT count(*), count(DISTINCT id) FROM {TABLE}"
        ).fetchone()
        by_source = dict(
            conn.execute(f"SELECT source, count(*) FROM {TABLE} GROUP BY 1").fetchall()
        )
        database_nodes = {
            row[0]
            for row in conn.execute(
                f"SELECT DISTINCT (id >> {SEQUENCE_BITS}) & {NODE_MASK} FROM {TABLE} "
                "WHERE source <> 'python'"
            )
        }
        python_nodes = {
            row[0]
            for row in conn.execute(
                f"SELECT DISTINCT (id >> {SEQUENCE_BITS}) & {NODE_MASK} FROM {TABLE} "
                "WHERE source = 'python'"
            )
        }
        low, high = conn.execute(
            f"SELECT min(id >> {SEQUENCE_BITS + 8}), max(id >> {SEQUENCE_BITS + 8}) FROM {TABLE}"
        ).fetchone()
    assert by_source["select"] == 100_000 and by_source["copy"] == 1_000_000
    assert by_source["python"] == sum(made for _, made in results) + 4
    assert distinct == total
    assert database_nodes == {255}
    assert python_nodes and not python_nodes & RESERVED
    # Every id decodes to its layout: a time part of this test's run.
    assert first_tick <= low <= high <= last_tick + 5


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_migrating_the_default_forward_and_backward_on_a_table_with_rows():
    from tests.dbidsapp.models import Label

    pk, code = Label._meta.pk, Label._meta.get_field("code")

    def insert(cursor, *, with_code: bool = False) -> int:
        """A service that writes the pk (and maybe the code), leaving the rest out."""
        if with_code:
            cursor.execute(
                "INSERT INTO dbidsapp_label (id, name, code) VALUES (%s, 'old', %s) RETURNING code",
                [pk.new_id(), code.new_id()],
            )
        else:
            cursor.execute(
                "INSERT INTO dbidsapp_label (id, name) VALUES (%s, 'sql') RETURNING code",
                [pk.new_id()],
            )
        return cursor.fetchone()[0]

    def check() -> None:
        out = io.StringIO()
        call_command("snowid_database_ids", "--check", "--database", "default", stdout=out)

    try:
        call_command("migrate", "dbidsapp", "0001", verbosity=0)
        with connection.cursor() as cursor:
            before = {insert(cursor, with_code=True) for _ in range(100)}
        with pytest.raises(IntegrityError), connection.cursor() as cursor:
            insert(cursor)  # no default yet: NOT NULL
        with pytest.raises(CommandError, match=r"dbidsapp_label\.code \(missing\)"):
            check()
        # No W600: the pending migrations add the default (tests/ids/database/test_migrate.py).
        assert check_database_defaults(databases=["default"]) == []

        call_command("migrate", "dbidsapp", "0002", verbosity=0)  # AlterField: SET DEFAULT
        with connection.cursor() as cursor:
            cursor.execute("SELECT code FROM dbidsapp_label")
            assert {row[0] for row in cursor.fetchall()} == before  # the rows kept theirs
            new = insert(cursor)
        assert _node(new) == 255 and new not in before

        call_command("migrate", "dbidsapp", "0003", verbosity=0)  # AddField on 101 rows
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*), count(DISTINCT batch) FROM dbidsapp_label")
            assert cursor.fetchone() == (101, 101)
            cursor.execute(
                f"SELECT DISTINCT (batch >> {SEQUENCE_BITS}) & {NODE_MASK} FROM dbidsapp_label"
            )
            assert cursor.fetchall() == [(255,)]
        check()
        assert check_database_defaults(databases=["default"]) == []

        call_command("migrate", "dbidsapp", "0001", verbosity=0)  # both undone
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM dbidsapp_label")
            assert cursor.fetchone() == (101,)
        with pytest.raises(IntegrityError), connection.cursor() as cursor:
            insert(cursor)
    finally:
        call_command("migrate", "dbidsapp", verbosity=0)
    check()


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_a_used_up_tick_moves_to_the_next_one():
    """A geometry of 32 ids a tick: an INSERT ... SELECT of 5,000 rows waits for the next
    tick each time one is used up, as the Python generator does; nothing spills."""
    from django_snowid.core.layout import layout_from_spec
    from django_snowid.ids.database.postgresql import install_statements

    layout = layout_from_spec({"time_bits": 41, "node": {"worker": 8}, "sequence_bits": 5})
    geometry = Geometry.of(layout)
    with _psycopg() as conn:
        for statement in install_statements(geometry, schema="public", node=200, tolerance_ms=5):
            conn.execute(statement)
        conn.execute(
            f"CREATE TABLE small_ticks (id bigint PRIMARY KEY DEFAULT {geometry.function}(), n int)"
        )
        try:
            conn.execute("INSERT INTO small_ticks (n) SELECT g FROM generate_series(1, 5000) g")
            ids = [row[0] for row in conn.execute("SELECT id FROM small_ticks ORDER BY n")]
        finally:
            conn.execute("DROP TABLE small_ticks")
    assert ids == sorted(ids) and len(set(ids)) == 5000
    decoded = [layout.decode(value) for value in ids]
    assert {d.node for d in decoded} == {200}
    per_tick: dict[int, int] = {}
    for d in decoded:
        per_tick[d.tick] = per_tick.get(d.tick, 0) + 1
    assert max(per_tick.values()) <= 32 and len(per_tick) >= 5000 // 32
    # A tick entered right after a used-up one starts at sequence 0 (no offset lost).
    last = {d.tick: d.sequence for d in decoded}
    first = {d.tick: d.sequence for d in reversed(decoded)}
    after_used_up = [tick + 1 for tick, seq in last.items() if seq == 31 and tick + 1 in first]
    assert after_used_up and all(first[tick] == 0 for tick in after_used_up)


@postgresql_only
@pytest.mark.django_db
@isolate_apps("tests.dbidsapp")
def test_the_docs_data_migration_loads_rows_with_database_ids():
    """The data migration of docs/database-ids.rst, as written, applied to the docs'
    ``shop_stockmovement`` (a model of the same columns, on the layout of these tests)."""
    from django.db.migrations.state import ProjectState

    from tests.project.test_docs_examples import DOCS, parse_rst

    (block,) = [
        b for b in parse_rst(DOCS / "database-ids.rst").blocks if b.caption.endswith("_stock.py")
    ]

    class StockMovement(models.Model):
        id = SnowflakeAutoField(primary_key=True, layout="dbids", database_ids=True)
        sku = models.CharField(max_length=40)
        quantity = models.IntegerField()

        class Meta:
            app_label = "dbidsapp"
            db_table = "shop_stockmovement"

    namespace: dict[str, object] = {"__name__": "shop.migrations.0003_load_stock"}
    exec(compile(block.text, block.label, "exec"), namespace)
    migration = namespace["Migration"]("0003_load_stock", "shop")
    assert migration.dependencies == [("shop", "0002_stockmovement")]
    with connection.schema_editor() as editor:
        editor.create_model(StockMovement)
        editor.execute("CREATE TABLE staging_stock (sku varchar(40), quantity integer)")
        editor.execute("INSERT INTO staging_stock VALUES ('tea', 3), ('cups', 4), ('pot', 1)")
        migration.apply(ProjectState(), editor)
    rows = list(StockMovement.objects.order_by("pk").values_list("pk", "sku", "quantity"))
    assert sorted((sku, quantity) for _, sku, quantity in rows) == [
        ("cups", 4),
        ("pot", 1),
        ("tea", 3),
    ]
    assert {StockMovement._meta.pk.decode(pk).node for pk, _, _ in rows} == {255}
