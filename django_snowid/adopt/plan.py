"""A switch to Snowflake ids as data: the columns that change and the steps, from :class:`Facts`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .pg_catalog import Built

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
    "constraints": "SHARE ROW EXCLUSIVE, or ACCESS EXCLUSIVE for a check, for a moment "
    "(ADD ... NOT VALID), then SHARE UPDATE EXCLUSIVE while VALIDATE reads: writes go on",
    "swap": "ACCESS EXCLUSIVE for a moment (renames, drop of the old column), under "
    "lock_timeout, retried; the values are compared with their shadows just before",
    "compare": "none (the catalog read again and compared with the one before the switch)",
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
    rebuilt: tuple[Built, ...] = ()  # PostgreSQL: what the online switch makes again
    recorder: str | None = None  # django_migrations.id's type, when too narrow


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

    @property
    def constraint_tables(self) -> list[str]:
        owners = [b.table for b in self.facts.rebuilt if b.kind in ("foreign key", "check")]
        return [t for t in dict.fromkeys([*self.tables, *owners]) if t in owners]

    def columns_of(self, table: str) -> list[Column]:
        return [c for c in self.facts.columns if c.table == table and c.rewrite]

    def built_of(self, table: str, *kinds: str) -> list[Built]:
        return [b for b in self.facts.rebuilt if b.table == table and b.kind in kinds]

    def rows_of(self, table: str) -> int:
        return max((c.rows for c in self.facts.columns if c.table == table), default=0)

    def names_of(self, table: str) -> str:
        return ", ".join(f"{table}.{c.column}" for c in self.columns_of(table))

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
        facts["rebuilt"] = tuple(Built(**b) for b in facts.get("rebuilt", ()))
        for name in ("migrations", "refusals", "notes"):
            facts[name] = tuple(facts[name])
        return cls(Facts(**facts), data["online"], [Step(**s) for s in data["steps"]])


#: (action, table, what, rows, seconds) of a step, before it is numbered.
Draft = tuple[str, str, str, int, float]


def build_plan(facts: Facts, *, online: bool | None = None, batch_size: int = 10_000) -> Plan:
    """The steps of the switch: online (PostgreSQL) or the plain migration."""

    if online is None:
        online = facts.vendor == "postgresql"
    plan = Plan(facts, online and facts.vendor == "postgresql")
    files = ", ".join(facts.migrations) or "none"
    drafts: list[Draft] = [("write_migration", "", f"write the migration ({files})", 0, 0.0)]
    if not plan.online:
        drafts += _plain_steps(plan)
    elif plan.tables:
        drafts += _online_steps(plan, batch_size)
    drafts += _closing_steps(plan)
    plan.steps = [
        Step(number, action, table, what, LOCKS[action], rows, round(seconds, 1))
        for number, (action, table, what, rows, seconds) in enumerate(drafts, 1)
    ]
    return plan


def _plain_steps(plan: Plan) -> list[Draft]:
    vendor = plan.facts.vendor
    speed = SPEED.get(f"rewrite_{vendor}", 100_000)
    drafts: list[Draft] = []
    for column in plan.facts.columns:
        if column.rewrite or vendor == "sqlite" or column.kind == "pk":
            what = f"{column.table}.{column.column}: {column.db_type or 'integer'} -> bigint"
            if column.kind == "pk":
                what += ", without its identity"
            drafts.append(
                (f"migrate_{vendor}", column.table, what, column.rows, column.rows / speed)
            )
    return drafts


def _online_steps(plan: Plan, batch_size: int) -> list[Draft]:
    drafts: list[Draft] = []
    for table in plan.tables:
        what = f"add bigint shadow columns of {plan.names_of(table)}, and the trigger keeping "
        drafts.append(("prepare", table, what + "them in sync", 0, 0.0))
    for table in plan.tables:
        rows = plan.rows_of(table)
        what = f"copy {plan.names_of(table)} to the shadow columns, {batch_size} rows a batch"
        drafts.append(("backfill", table, what, rows, rows / SPEED["backfill"]))
    for table in plan.tables:
        rows, built = plan.rows_of(table), plan.built_of(table, "index", "unique", "primary key")
        names = ", ".join(b.name for b in built) or "none"
        what = f"build the indexes of the shadow columns of {table}, concurrently ({names})"
        drafts.append(("index", table, what, rows, rows / SPEED["index"] * max(len(built), 1)))
    for table in plan.constraint_tables:
        rows, built = plan.rows_of(table), plan.built_of(table, "foreign key", "check")
        what = (
            f"add the foreign keys and checks of {table} on the shadow columns NOT VALID, "
            f"then VALIDATE ({', '.join(b.name for b in built)})"
        )
        drafts.append(("constraints", table, what, rows, rows / SPEED["validate"]))
    drafts += [_swap_step(plan, table) for table in plan.tables]
    return drafts


def _swap_step(plan: Plan, table: str) -> Draft:
    what = (
        f"swap in the shadow columns of {table} (a sequence moves along, as bigint), "
        "drop the old ones"
    )
    rows, seconds = 0, 0.0
    for built in plan.built_of(table, "exclusion"):
        rows = plan.rows_of(table)
        seconds += rows / SPEED["index"]
        what += f"; the exclusion constraint {built.name} is built again under the lock"
    return ("swap", table, what, rows, seconds)


def _closing_steps(plan: Plan) -> list[Draft]:
    facts = plan.facts
    recorder = (
        f"widen django_migrations.id ({facts.recorder} -> bigint: DEFAULT_AUTO_FIELD gives "
        "its rows Snowflake ids), then "
        if facts.recorder
        else ""
    )
    if not plan.online:
        return [("record", "", f"{recorder}record the switch in the journal", 0, 0.0)]
    drafts: list[Draft] = []
    if facts.sequence:
        what = f"drop the old sequence {facts.sequence} of {facts.table} (--keep-sequence keeps it)"
        drafts.append(("drop_identity", facts.table, what, 0, 0.0))
    if plan.tables:
        what = "compare the catalog with the one before the switch (integer -> bigint aside)"
        drafts.append(("compare", "", what, 0, 0.0))
    what = f"{recorder}record the migration as applied, and the switch in the journal"
    return [*drafts, ("record", "", what, 0, 0.0)]
