"""A switch to Snowflake ids as data: the columns that change and the steps, from :class:`Facts`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Column", "Facts", "Plan", "Step", "build_plan"]

NARROW_DB_TYPES = frozenset({"integer", "int", "smallint", "mediumint", "tinyint"})

#: Rough speeds of this kind of work on a small server (rows a second): estimates only.
SPEED = {
    "backfill": 40_000,
    "index": 400_000,
    "validate": 1_000_000,
    "rewrite_postgresql": 300_000,
    "rewrite_mysql": 150_000,
    "rewrite_sqlite": 300_000,
}

LOCKS = {
    "write_migration": "none (a file)",
    "prepare": "ACCESS EXCLUSIVE for a moment (ADD COLUMN, CREATE TRIGGER), under "
    "lock_timeout, retried",
    "backfill": "ROW EXCLUSIVE: writers wait only for the rows of one batch",
    "index": "SHARE UPDATE EXCLUSIVE (CREATE INDEX CONCURRENTLY): reads and writes go on",
    "foreign_keys": "SHARE ROW EXCLUSIVE for a moment (ADD ... NOT VALID), then SHARE "
    "UPDATE EXCLUSIVE while VALIDATE reads: writes go on",
    "swap": "ACCESS EXCLUSIVE for a moment (renames, drop of the old column), under "
    "lock_timeout, retried",
    "drop_identity": "ACCESS EXCLUSIVE for a moment, under lock_timeout, retried",
    "record": "none (the migration recorded as applied)",
    "migrate_postgresql": "ACCESS EXCLUSIVE for the whole rewrite: reads and writes wait",
    "migrate_mysql": "ALGORITHM=COPY, LOCK=SHARED for the whole copy: reads go on, writes wait",
    "migrate_sqlite": "the database's write lock for the whole rebuild: writes wait",
}


@dataclass(frozen=True)
class Column:
    """A column holding the adopted key's values."""

    table: str
    column: str
    kind: str  # pk, foreign key, one-to-one, many-to-many, generic relation
    label: str  # app_label.Model.field
    db_type: str  # as the database names it ("" where every integer holds 64 bits)
    nullable: bool
    rows: int

    @property
    def rewrite(self) -> bool:
        """Whether its values need a wider column (a rewrite of its table)."""
        return self.db_type.lower() in NARROW_DB_TYPES


@dataclass(frozen=True)
class Facts:
    """What the plan is built from (see :func:`.facts.read_facts`)."""

    label: str
    vendor: str  # postgresql, mysql, sqlite
    table: str
    column: str
    old_type: str  # the key's field in the migrations: AutoField, BigAutoField, ...
    code_type: str  # the key's field in the code: its class name
    old_max: int | None
    first_id: int
    sequence: str | None
    columns: tuple[Column, ...]
    migrations: tuple[str, ...]  # "app_label.name" of the migrations it writes
    refusals: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    number: int
    action: str
    table: str
    what: str
    lock: str
    rows: int
    seconds: float


@dataclass
class Plan:
    facts: Facts
    online: bool
    steps: list[Step] = field(default_factory=list)

    @property
    def tables(self) -> list[str]:
        """The tables whose columns are rewritten, the adopted model's first."""
        return list(dict.fromkeys(c.table for c in self.facts.columns if c.rewrite))

    def columns_of(self, table: str) -> list[Column]:
        return [c for c in self.facts.columns if c.table == table and c.rewrite]

    def rows_of(self, table: str) -> int:
        return max((c.rows for c in self.facts.columns if c.table == table), default=0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "online": self.online,
            "facts": asdict(self.facts),
            "steps": [asdict(s) for s in self.steps],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Plan:
        facts = dict(data["facts"])
        facts["columns"] = tuple(Column(**c) for c in facts["columns"])
        for name in ("migrations", "refusals", "notes"):
            facts[name] = tuple(facts[name])
        return cls(Facts(**facts), data["online"], [Step(**s) for s in data["steps"]])


def build_plan(facts: Facts, *, online: bool | None = None, batch_size: int = 10_000) -> Plan:
    """The steps of the switch: online (PostgreSQL) or the plain migration."""

    vendor = facts.vendor
    rewrites = any(c.rewrite for c in facts.columns)
    if online is None:
        online = vendor == "postgresql"
    plan = Plan(facts, online and vendor == "postgresql")
    steps: list[tuple[str, str, str, int, float]] = []

    def add(action: str, table: str, what: str, rows: int = 0, seconds: float = 0.0) -> None:
        steps.append((action, table, what, rows, seconds))

    files = ", ".join(facts.migrations) or "none"
    add("write_migration", "", f"write the migration ({files})")
    if not plan.online:
        speed = SPEED.get(f"rewrite_{vendor}", 100_000)
        lock = f"migrate_{vendor}"
        for column in facts.columns:
            if column.rewrite or vendor == "sqlite" or column.kind == "pk":
                what = f"{column.table}.{column.column}: {column.db_type or 'integer'} -> bigint"
                if column.kind == "pk":
                    what += ", without its identity"
                add(lock, column.table, what, column.rows, column.rows / speed)
        add("record", "", "record the switch in the journal")
    else:
        for table in plan.tables:
            names = ", ".join(c.column for c in plan.columns_of(table))
            add(
                "prepare",
                table,
                f"add bigint shadow columns of {names}, and the trigger keeping them in sync",
            )
        for table in plan.tables:
            rows = plan.rows_of(table)
            add(
                "backfill",
                table,
                f"copy {names_of(plan, table)} to the shadow columns, {batch_size} rows a batch",
                rows,
                rows / SPEED["backfill"],
            )
        for table in plan.tables:
            rows = plan.rows_of(table)
            add(
                "index",
                table,
                "build the indexes and constraints of the shadow columns, concurrently",
                rows,
                rows / SPEED["index"],
            )
        for table in plan.tables:
            if any(c.kind != "pk" and c.kind != "generic relation" for c in plan.columns_of(table)):
                rows = plan.rows_of(table)
                add(
                    "foreign_keys",
                    table,
                    "add the foreign keys of the shadow columns NOT VALID, then VALIDATE",
                    rows,
                    rows / SPEED["validate"],
                )
        for table in plan.tables:
            add(
                "swap",
                table,
                "swap in the shadow columns (the sequence moves along, as bigint), "
                "drop the old ones",
            )
        if facts.sequence:
            add(
                "drop_identity",
                facts.table,
                f"drop the old sequence {facts.sequence} (--keep-sequence keeps it)",
            )
        add("record", "", "record the migration as applied, and the switch in the journal")
    if plan.online and not rewrites:
        steps[:] = [s for s in steps if s[0] in ("write_migration", "drop_identity", "record")]
    plan.steps = [
        Step(number, action, table, what, LOCKS[action], rows, round(seconds, 1))
        for number, (action, table, what, rows, seconds) in enumerate(steps, 1)
    ]
    return plan


def names_of(plan: Plan, table: str) -> str:
    return ", ".join(c.column for c in plan.columns_of(table))
