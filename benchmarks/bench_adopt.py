"""``snowid_adopt`` on PostgreSQL while an application writes: how long writers wait.

    python benchmarks/bench_adopt.py [--rows 1000000] [--rate 200]

Builds, in a database of its own (``--db-name``, dropped at the end), ``--rows`` items with
a 32-bit ``AutoField`` key, as many children pointing at them by a foreign key, a
many-to-many table and a generic-relation table of ``--rows / 10`` rows each
(``benchmarks/adoptbench``), and what a DBA adds by hand: a table no model describes
(``--rows / 10`` rows) pointing at the items ``ON DELETE CASCADE``, a check, a covering
index and a partial ``DESC`` index on the children's key; then switches ``Item`` to
Snowflake ids twice, on fresh
copies of the same data, while a writer process of the old code does ``--rate`` ORM
writes a second (inserts into the child, many-to-many and generic tables, updates of
children and items; each statement under ``lock_timeout``, retried when it runs out):

- ``snowid_adopt --execute --keep-sequence``: the online switch;
- ``snowid_adopt --execute --plain``: the anchor, Django's ``AlterField`` (the plain
  migration), which rewrites every table under ``ACCESS EXCLUSIVE``.

For each it prints the longest time a writer's statement took (lock waits and retries
included), the total duration, the writer's errors other than lock timeouts, rows lost,
whether every foreign key is valid, whether every old (pk, fk) pair is unchanged (a
checksum before and after) and whether the catalog (every constraint, index and column)
is the same before and after, integer -> bigint aside, and the online switch's figures as
ratios of the anchor's.
It exits 1 when an invariant does not hold.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MIGRATIONS = ROOT / "benchmarks" / "adoptbench" / "migrations"
GROUPS = 100

#: Each table's old rows, as the text whose hashes are summed before and after.
PAIRS = {
    "adoptbench_item": "id::text",
    "adoptbench_child": "id || ':' || item_id",
    "adoptbench_group_items": "id || ':' || group_id || ':' || item_id",
    "adoptbench_event": "id || ':' || object_id",
    "legacy_audit": "id || ':' || item_id",
}
WIDENED = [
    ("adoptbench_item", "id"),
    ("adoptbench_child", "item_id"),
    ("adoptbench_group_items", "item_id"),
    ("adoptbench_event", "object_id"),
    ("legacy_audit", "item_id"),
]
#: What a DBA added by hand, after the rows.
DBA = [
    "CREATE TABLE legacy_audit (id bigserial PRIMARY KEY, item_id integer NOT NULL "
    "REFERENCES adoptbench_item (id) ON DELETE CASCADE, note text NOT NULL)",
    "INSERT INTO legacy_audit (item_id, note) "
    "SELECT 1 + (g::bigint * 13) %% %(rows)s, 'a' FROM generate_series(1, %(small)s) g",
    "CREATE INDEX legacy_audit_item ON legacy_audit (item_id)",
    "ALTER TABLE adoptbench_child ADD CONSTRAINT child_item_positive CHECK (item_id > 0)",
    "CREATE INDEX child_item_label ON adoptbench_child (item_id) INCLUDE (label)",
    "CREATE INDEX child_recent ON adoptbench_child (item_id DESC) WHERE label <> 'x'",
]
#: Every constraint, index and column of the schema (types and identities aside).
CATALOG = """
    SELECT 'constraint ' || cl.relname || '.' || c.conname, pg_get_constraintdef(c.oid)
    FROM pg_constraint c JOIN pg_class cl ON cl.oid = c.conrelid
    WHERE cl.relnamespace = 'public'::regnamespace AND cl.relname NOT LIKE 'django%%'
    UNION ALL
    SELECT 'index ' || cl.relname || '.' || ic.relname, pg_get_indexdef(i.indexrelid)
    FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class cl
    ON cl.oid = i.indrelid
    WHERE cl.relnamespace = 'public'::regnamespace AND cl.relname NOT LIKE 'django%%'
    UNION ALL
    SELECT 'column ' || cl.relname || '.' || a.attname, a.attnotnull::text
    FROM pg_attribute a JOIN pg_class cl ON cl.oid = a.attrelid
    WHERE cl.relnamespace = 'public'::regnamespace AND cl.relkind = 'r'
      AND cl.relname NOT LIKE 'django%%' AND a.attnum > 0 AND NOT a.attisdropped
"""


# ------------------------------------------------------------------ the writer
def writer(rate: float, items: int, lock_timeout_ms: int) -> None:
    """The old code (the models of migration 0001) writing until SIGTERM; prints a JSON
    report: every statement's time, the retries, the errors and the ids it inserted."""
    import django

    django.setup()
    import random

    from django.db import DatabaseError, OperationalError, connection
    from django.db.migrations.loader import MigrationLoader

    state = MigrationLoader(connection).project_state(("adoptbench", "0001_initial")).apps
    item_model, child_model, group_model, event_model = (
        state.get_model("adoptbench", name) for name in ("Item", "Child", "Group", "Event")
    )
    link_model = group_model._meta.get_field("items").remote_field.through
    content_type = state.get_model("contenttypes", "ContentType").objects.get(
        app_label="adoptbench", model="item"
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SET lock_timeout = '{int(lock_timeout_ms)}ms'")
    groups: list[Any] = []
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    rng = random.Random(7)
    inserted: dict[str, list[int]] = {"child": [], "event": [], "link": []}
    linked = iter(range(10**9))

    def add_child() -> None:
        row = child_model.objects.create(item_id=rng.randint(1, items), label="w")
        inserted["child"].append(row.pk)

    def add_event() -> None:
        row = event_model.objects.create(
            content_type=content_type, object_id=rng.randint(1, items), kind="w"
        )
        inserted["event"].append(row.pk)

    def add_link() -> None:
        number = next(linked)
        if number % items == 0:  # every item linked to the last group: a new group
            groups.append(group_model.objects.create(name="writer"))
        row = link_model.objects.create(group_id=groups[-1].pk, item_id=number % items + 1)
        inserted["link"].append(row.pk)

    operations = [
        add_child,
        lambda: child_model.objects.filter(pk=rng.randint(1, items)).update(label="u"),
        add_event,
        add_link,
        lambda: item_model.objects.filter(pk=rng.randint(1, items)).update(name="u"),
    ]
    waits: list[tuple[float, float]] = []  # (wall-clock start, seconds)
    retries = 0
    errors: list[str] = []
    interval = 1 / rate
    next_at = time.monotonic()
    number = 0
    while not stop:
        operation = operations[number % len(operations)]
        number += 1
        began_wall, began = time.time(), time.perf_counter()
        while True:
            try:
                operation()
                break
            except OperationalError as exc:
                if getattr(exc.__cause__, "sqlstate", None) == "55P03":
                    retries += 1  # lock_timeout: the application retries
                    continue
                errors.append(str(exc)[:300])
                break
            except DatabaseError as exc:
                errors.append(f"{type(exc).__name__}: {str(exc)[:300]}")
                break
        waits.append((began_wall, time.perf_counter() - began))
        next_at += interval
        now = time.monotonic()
        if next_at > now:
            time.sleep(next_at - now)
        elif now - next_at > 1:
            next_at = now  # held up: carry on at the rate, no burst
    print(json.dumps({"waits": waits, "retries": retries, "errors": errors, **inserted}))


# --------------------------------------------------------------- the project
class Project:
    """The benchmark's project: a database of its own and a copy of the migrations
    (``snowid_adopt`` writes the next one there), driven in processes of its own."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.where = Path(tempfile.mkdtemp(prefix="snowid-adopt-bench-"))
        self.package = "adoptbench_migrations"
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "benchmarks.adopt_settings",
            "PYTHONPATH": os.pathsep.join([str(self.where), str(ROOT)]),
            "SNOWID_ADOPT_BENCH_MIGRATIONS": self.package,
            "SNOWID_ADOPT_BENCH_DB_NAME": name,
            "PYTHONUNBUFFERED": "1",
        }

    def connect(self, dbname: str | None = None) -> Any:
        import psycopg

        return psycopg.connect(
            host=os.environ.get("SNOWID_BENCH_PG_HOST", "127.0.0.1"),
            port=os.environ.get("SNOWID_BENCH_PG_PORT", "5432"),
            user=os.environ.get("SNOWID_PG_USER", "postgres"),
            dbname=dbname or self.name,
            autocommit=True,
        )

    def recreate(self) -> None:
        shutil.rmtree(self.where / self.package, ignore_errors=True)
        shutil.copytree(MIGRATIONS, self.where / self.package)
        with self.connect("postgres") as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.name}"')

    def drop(self) -> None:
        with self.connect("postgres") as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        shutil.rmtree(self.where, ignore_errors=True)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, *args],
            cwd=self.where,
            env=self.env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "django", *args],
            cwd=self.where,
            env=self.env,
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise RuntimeError(f"manage.py {' '.join(args)}: {done.stdout}{done.stderr}")
        return done.stdout


def fill(conn: Any, rows: int) -> dict[str, int]:
    """The old data, made in SQL; the rows of each table."""
    small = max(rows // 10, 1)
    (content_type,) = conn.execute(
        "SELECT id FROM django_content_type WHERE app_label = 'adoptbench' AND model = 'item'"
    ).fetchone()
    statements = [
        ("INSERT INTO adoptbench_item (id, name) SELECT g, 'i' FROM generate_series(1, %s) g",
         [rows]),
        ("SELECT setval(pg_get_serial_sequence('adoptbench_item', 'id'), %s)", [rows]),
        ("INSERT INTO adoptbench_child (item_id, label) "
         "SELECT 1 + (g::bigint * 7919) %% %s, 'c' FROM generate_series(1, %s) g", [rows, rows]),
        ("INSERT INTO adoptbench_group (name) SELECT 'g' FROM generate_series(1, %s)", [GROUPS]),
        ("INSERT INTO adoptbench_group_items (group_id, item_id) "
         "SELECT 1 + g %% %s, g FROM generate_series(1, %s) g", [GROUPS, small]),
        ("INSERT INTO adoptbench_event (content_type_id, object_id, kind) "
         "SELECT %s, 1 + (g::bigint * 31) %% %s, 'e' FROM generate_series(1, %s) g",
         [content_type, rows, small]),
    ]  # fmt: skip
    for sql, params in statements:
        conn.execute(sql, params)
    for sql in DBA:
        conn.execute(sql % {"rows": rows, "small": small})
    for table in PAIRS:
        conn.execute(f"VACUUM ANALYZE {table}")
    return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in PAIRS}


def checksums(conn: Any, upto: dict[str, int]) -> dict[str, list[Any]]:
    """(rows, sum of hashes of the row's ids) of each table's old rows."""
    found = {}
    for table, pairs in PAIRS.items():
        count, total = conn.execute(
            f"SELECT count(*), sum(hashtextextended({pairs}, 0)) FROM {table} WHERE id <= %s",
            [upto[table]],
        ).fetchone()
        found[table] = [count, str(total)]
    return found


def foreign_keys(conn: Any) -> list[tuple[str, str, str, bool]]:
    """(table, column, referenced table, validated) of every foreign key (Django's
    AlterField renames them)."""
    return sorted(
        conn.execute(
            "SELECT c.conrelid::regclass::text, a.attname, c.confrelid::regclass::text, "
            "c.convalidated FROM pg_constraint c JOIN pg_attribute a "
            "ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] "
            "WHERE c.contype = 'f' AND c.conrelid::regclass::text LIKE 'adoptbench%%'"
        ).fetchall()
    )


def catalog(conn: Any) -> dict[str, str]:
    """The schema's constraints, indexes and columns (their NOT NULL)."""
    return dict(conn.execute(CATALOG).fetchall())


def orphans(conn: Any) -> int:
    total = 0
    for table, column in WIDENED[1:]:
        total += conn.execute(
            f"SELECT count(*) FROM {table} t LEFT JOIN adoptbench_item i ON i.id = t.{column} "
            "WHERE i.id IS NULL"
        ).fetchone()[0]
    return int(total)


def run(project: Project, mode: str, args: argparse.Namespace) -> dict[str, Any]:
    """One switch of fresh data under the writer; its figures and invariants."""
    project.recreate()
    project.manage("migrate", "-v", "0")
    with project.connect() as conn:
        started = time.perf_counter()
        sizes = fill(conn, args.rows)
        filled = time.perf_counter() - started
        upto = {t: conn.execute(f"SELECT max(id) FROM {t}").fetchone()[0] for t in PAIRS}
        before = checksums(conn, upto)
        keys_before = foreign_keys(conn)
        catalog_before = catalog(conn)
    command = ["snowid_adopt", "adoptbench.Item", "--execute"]
    command += ["--plain"] if mode == "plain" else ["--keep-sequence"]
    plan = json.loads(project.manage(*command[:2], *command[3:], "--json"))
    actions = {step["number"]: step["action"] for step in plan["steps"]}
    writing = project.popen(
        str(Path(__file__).resolve()),
        "--writer",
        "--rate",
        str(args.rate),
        "--rows",
        str(args.rows),
        "--writer-lock-timeout-ms",
        str(args.writer_lock_timeout_ms),
    )
    time.sleep(args.settle)
    steps: list[tuple[float, str]] = []
    began_wall, began = time.time(), time.perf_counter()
    adopting = project.popen("-m", "django", *command)
    assert adopting.stdout is not None
    for line in adopting.stdout:
        if line.startswith("step "):
            number = int(line.split()[1].split("/")[0])
            steps.append((time.time(), actions.get(number, "?")))
    adopting.wait()
    duration = time.perf_counter() - began
    ended_wall = time.time()
    if adopting.returncode:
        writing.kill()
        raise RuntimeError(f"snowid_adopt failed: {adopting.stderr.read()}")  # type: ignore[union-attr]
    time.sleep(args.settle)
    writing.send_signal(signal.SIGTERM)
    out, err = writing.communicate(timeout=300)
    if writing.returncode:
        raise RuntimeError(f"the writer failed: {err[-3000:]}")
    report = json.loads(out.strip().splitlines()[-1])
    new_id = int(
        project.manage(
            "shell",
            "-c",
            "from benchmarks.adoptbench.models import Item\n"
            "print(Item.objects.create(name='n').pk)",
        ).split()[-1]
    )
    with project.connect() as conn:
        after = checksums(conn, upto)
        keys_after = foreign_keys(conn)
        catalog_kept = catalog(conn) == catalog_before
        lost = 0
        for table, name in (
            ("adoptbench_child", "child"),
            ("adoptbench_event", "event"),
            ("adoptbench_group_items", "link"),
        ):
            ids = report[name]
            found = conn.execute(f"SELECT count(*) FROM {table} WHERE id = ANY(%s)", [ids])
            lost += len(ids) - found.fetchone()[0]
        types = {
            conn.execute(
                "SELECT data_type FROM information_schema.columns "
                "WHERE table_name = %s AND column_name = %s",
                [table, column],
            ).fetchone()[0]
            for table, column in WIDENED
        }
        orphan_rows = orphans(conn)
    waits = [seconds for _, seconds in report["waits"]]
    during = [s for wall, s in report["waits"] if began_wall <= wall + s and wall <= ended_wall]
    worst_at, worst = max(report["waits"], key=lambda w: w[1])
    worst_step = next(
        (action for at, action in reversed(steps) if at <= worst_at + worst), "before the switch"
    )
    phases: dict[str, float] = {}
    marks = [*steps, (ended_wall, "end")]
    for (at, action), (next_at, _) in itertools.pairwise(marks):
        phases[action] = phases.get(action, 0.0) + next_at - at
    return {
        "mode": mode,
        "sizes": sizes,
        "filled": filled,
        "duration": duration,
        "worst": worst,
        "worst_step": worst_step,
        "p99": statistics.quantiles(during if len(during) > 1 else waits, n=100)[98],
        "over_1s": sum(1 for s in waits if s > 1),
        "writes": len(waits),
        "rate": len(during) / duration if duration else 0.0,
        "retries": report["retries"],
        "errors": report["errors"],
        "lost": lost,
        "keys_valid": keys_before == keys_after
        and all(v for *_, v in keys_after)
        and orphan_rows == 0,
        "pairs_kept": before == after,
        "catalog_kept": catalog_kept,
        "bigint": types == {"bigint"},
        "new_id_above": new_id > upto["adoptbench_item"],
        "phases": phases,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="items and children")
    parser.add_argument("--rate", type=float, default=200.0, help="writer's ORM writes/s")
    parser.add_argument("--writer-lock-timeout-ms", type=int, default=1000)
    parser.add_argument("--settle", type=float, default=3.0, help="writing before and after, s")
    parser.add_argument("--db-name", default="snowid_adopt_bench")
    parser.add_argument("--writer", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.writer:
        writer(args.rate, args.rows, args.writer_lock_timeout_ms)
        return 0

    project = Project(args.db_name)
    small = max(args.rows // 10, 1)
    print(
        f"snowid_adopt on PostgreSQL: {args.rows:,} items (32-bit pk), {args.rows:,} children, "
        f"{small:,} many-to-many rows, {small:,} generic-relation rows"
    )
    print(
        f"  a writer of the old code at {args.rate:.0f} ORM writes/s, lock_timeout "
        f"{args.writer_lock_timeout_ms} ms (retried); load average before: "
        f"{os.getloadavg()[0]:.1f} (2 cores are shared)"
    )
    try:
        online = run(project, "online", args)
        plain = run(project, "plain", args)
    finally:
        project.drop()
    print(f"  filled in {online['filled']:.1f} s and {plain['filled']:.1f} s (generate_series)")
    print()
    print(f"  {'':<44}{'online':>12}{'plain (anchor)':>16}{'ratio':>8}")

    def row(what: str, key: str, fmt: str, ratio: bool = False) -> None:
        a, b = online[key], plain[key]
        shown = f"{a / b:8.3f}" if ratio and b else ""
        print(f"  {what:<44}{format(a, fmt):>12}{format(b, fmt):>16}{shown}")

    row("longest writer statement, lock waits incl. (s)", "worst", ".2f", ratio=True)
    row("p99 writer statement during the switch (s)", "p99", ".3f", ratio=True)
    row("writer statements over 1 s", "over_1s", "d")
    row("total duration (s)", "duration", ".1f", ratio=True)
    row("writes done during the switch (/s)", "rate", ".0f", ratio=True)
    row("lock timeouts retried by the writer", "retries", "d")
    print(f"  {'writer errors other than lock timeouts':<44}"
          f"{len(online['errors']):>12}{len(plain['errors']):>16}")  # fmt: skip
    row("rows lost", "lost", "d")
    for what, key in (
        ("foreign keys valid", "keys_valid"),
        ("every old (pk, fk) pair unchanged", "pairs_kept"),
        ("catalog the same (integer -> bigint aside)", "catalog_kept"),
        ("every column bigint", "bigint"),
        ("a new id above every old id", "new_id_above"),
    ):
        shown = ["yes" if r[key] else "NO" for r in (online, plain)]
        print(f"  {what:<44}{shown[0]:>12}{shown[1]:>16}")
    print(f"  longest writer statement during: {online['worst_step']} / {plain['worst_step']}")
    print("  online steps (s): " + ", ".join(f"{a} {s:.1f}" for a, s in online["phases"].items()))
    print(f"  load average after: {os.getloadavg()[0]:.1f}")
    failed = [
        f"{r['mode']}: {what}"
        for r in (online, plain)
        for what, bad in (
            ("writer errors " + "; ".join(r["errors"][:3]), bool(r["errors"])),
            ("rows lost", r["lost"] > 0),
            ("foreign keys", not r["keys_valid"]),
            ("old pairs changed", not r["pairs_kept"]),
            ("catalog changed", not r["catalog_kept"]),
            ("columns not bigint", not r["bigint"]),
            ("new id not above the old ones", not r["new_id_above"]),
        )
        if bad
    ]
    for failure in failed:
        print(f"  FAILED {failure}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
