"""The figures of docs/performance.rst, read from the benchmarks' recorded runs.

``make bench`` keeps each script's output in ``benchmarks/results/<script>.txt`` under a
line naming its run (``benchmarks/record.py``). Each figure the page quotes is a
substitution (``|orders.create|``) whose text is read here from one of those files by a
pattern, and each script's run is one too (``|bench_orders|``): the page never types a
figure, and shows one run's figure per measurement, naming the run. A script whose
output no longer matches a pattern fails the docs' check, not silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
RUN = re.compile(
    r"^# [^:]+: run of (?P<when>[^,]+), commit (?P<commit>[^,]+), .*? (?P<cpus>\d+) CPUs, "
    r"load average (?P<before>[\d.]+) before, (?P<after>[\d.]+) after$"
)


@dataclass(frozen=True)
class Figure:
    """A figure of ``script``'s output: the first group of ``pattern`` (a line of it)."""

    script: str
    pattern: str
    suffix: str = ""  # what the page writes after it ("x" after a bare ratio)

    def read(self, output: str) -> str:
        found = re.search(self.pattern, output, re.MULTILINE)
        if found is None:
            raise ValueError(f"{self.script}: no line matches {self.pattern!r}")
        return found[1] + self.suffix


def _postgresql(row: str) -> str:
    """A pattern of a line ``row`` of bench_orm.py's PostgreSQL part."""
    return rf"^postgresql\n(?:.*\n)*?  {row}"


RATE = r"([\d,]+)"
RATIO = r"([\d.]+x)"
ORM_CREATE = r"[\d,]+ x create\(\), SnowflakeAutoField\s+"
BURST = "^first tick of a burst after an idle tick, "

#: Every figure the page quotes, by its substitution name.
FIGURES: dict[str, Figure] = {
    # bench_ids.py
    "ids.next_id": Figure("bench_ids", rf"^django-snowid next_id\(\), 1 thread\s+{RATE}"),
    "ids.next_id_x": Figure("bench_ids", rf"^django-snowid next_id\(\), 1 thread\s+\S+\s+{RATIO}"),
    "ids.next_id4": Figure("bench_ids", rf"^django-snowid next_id\(\), 4 threads\s+{RATE}"),
    "ids.next_id4_x": Figure(
        "bench_ids", rf"^django-snowid next_id\(\), 4 threads\s+\S+\s+{RATIO}"
    ),
    "ids.wide": Figure("bench_ids", rf"^django-snowid next_id\(\), 20-bit sequence\s+{RATE}"),
    "ids.age": Figure("bench_ids", r"^largest age of an id at hand-out: ([\d.]+ ms)"),
    "ids.spread_next_id": Figure("bench_ids", rf"^next_id\(\), classic(?:\s+\S+){{2}}\s+{RATIO}"),
    "ids.spread_next_ids": Figure(
        "bench_ids", rf"^next_ids\(1000\), classic, per id(?:\s+\S+){{2}}\s+{RATIO}"
    ),
    "ids.burst_classic": Figure("bench_ids", rf"{BURST}classic: ([\d,.]+ of [\d,]+ ids)"),
    "ids.burst_classic_fewer": Figure("bench_ids", rf"{BURST}classic: .*?\(([\d.]+%) fewer"),
    "ids.burst_js53": Figure("bench_ids", rf"{BURST}js53: ([\d,.]+ of [\d,]+ ids)"),
    "ids.burst_js53_fewer": Figure("bench_ids", rf"{BURST}js53: .*?\(([\d.]+%) fewer"),
    # bench_orm.py (PostgreSQL's part)
    "orm.bulk_pg": Figure(
        "bench_orm",
        _postgresql(rf"bulk_create \S+ rows, batch \d+, SnowflakeAutoField\s+\S+\s+{RATIO}"),
    ),
    "orm.create_pg": Figure("bench_orm", _postgresql(rf"{ORM_CREATE}\S+\s+{RATIO}")),
    "orm.create_count": Figure("bench_orm", _postgresql(rf"{ORM_CREATE}{RATE}")),
    "orm.size_snowflake": Figure("bench_orm", rf"^  SnowflakeAutoField(?:\s+\S+){{5}}\s+{RATIO}"),
    "orm.size_uuid7": Figure(
        "bench_orm", rf"^  UUIDField, UUIDv7 in Python(?:\s+\S+){{5}}\s+{RATIO}"
    ),
    "orm.size_uuid4": Figure(
        "bench_orm", rf"^  UUIDField, UUIDv4 in Python(?:\s+\S+){{5}}\s+{RATIO}"
    ),
    # bench_orders.py
    "orders.one": Figure("bench_orders", rf"^django-snowid next_number\(\), 1 process\s+{RATE}"),
    "orders.one_x": Figure(
        "bench_orders", rf"^django-snowid next_number\(\), 1 process\s+\S+\s+{RATIO}"
    ),
    "orders.four": Figure("bench_orders", rf"^django-snowid next_number\(\), 4 processes\s+{RATE}"),
    "orders.create": Figure(
        "bench_orders", rf"^create\(\), OrderNumberField \(Redis\)\s+\S+\s+{RATIO}"
    ),
    "orders.create_unique": Figure(
        "bench_orders", rf"^create\(\), a UNIQUE bigint column set in Python\s+\S+\s+{RATIO}"
    ),
    "orders.bulk": Figure(
        "bench_orders", rf"^bulk_create\(\), OrderNumberQuerySet \(Redis\)\s+\S+\s+{RATIO}"
    ),
    "orders.bulk_unique": Figure(
        "bench_orders", rf"^bulk_create\(\), UNIQUE bigint set in Python\s+\S+\s+{RATIO}"
    ),
    "orders.bulk_over_unique": Figure(
        "bench_orders",
        rf"^\(the order numbers against the UNIQUE column set in Python: {RATIO}, ",
    ),
    "orders.create_over_unique": Figure(
        "bench_orders",
        rf"^\(the order number against the same row with its UNIQUE column set in Python: "
        rf"{RATIO}",
    ),
    "orders.database_x": Figure(
        "bench_orders", rf"^django-snowid database store, next_number\(\)\s+\S+\s+{RATIO}"
    ),
    # bench_leases.py
    "leases.database": Figure("bench_leases", r"^lease acquisition, database .*?median\s+(\S+ µs)"),
    "leases.redis": Figure("bench_leases", r"^lease acquisition, Redis, median\s+(\S+ µs)"),
    "leases.slot": Figure("bench_leases", r"^lease acquisition, slot .*?median\s+(\S+ µs)"),
    # bench_sequences.py
    "sequences.redis": Figure("bench_sequences", rf"^redis\s+next_value:\s+{RATE}/s"),
    "sequences.redis_x": Figure("bench_sequences", r"^redis\s+next_value:.*?ratio ([\d.]+)", "x"),
    "sequences.redis_many": Figure("bench_sequences", rf"^redis\s+next_values\(1000\):\s+{RATE}"),
    "sequences.pg_x": Figure("bench_sequences", r"^postgresql next_value:.*?ratio ([\d.]+)", "x"),
    "sequences.orders_x": Figure(
        "bench_sequences", r"^postgresql next_number:.*?ratio ([\d.]+)", "x"
    ),
    # bench_sequences_compat.py
    "compat.ratio": Figure(
        "bench_sequences_compat", r"^get_next_value \(autocommit\).*?ratio ([\d.]+)", "x"
    ),
    # bench_scripts.py
    "scripts.ours": Figure("bench_scripts", r"^RedisScript, own connection\s+([\d.]+)"),
    "scripts.ours_x": Figure(
        "bench_scripts", r"^RedisScript, own connection\s+\S+\s+([\d.]+)", "x"
    ),
    # bench_redis_capacity.py
    "capacity.draw": Figure("bench_redis_capacity", rf"^sequence draw \(DRAW\)\s+{RATE}"),
    "capacity.renew": Figure("bench_redis_capacity", rf"^lease renew \(RENEW_LUA\)\s+{RATE}"),
    "capacity.acquire": Figure(
        "bench_redis_capacity", rf"^lease acquire, pool of 1024 \(ACQUIRE_LUA\)\s+{RATE}"
    ),
    "capacity.blocks": Figure("bench_redis_capacity", rf"^numbers issued, all processes\s+{RATE}"),
    "capacity.blocks_x": Figure(
        "bench_redis_capacity", rf"^numbers issued, all processes\s+\S+ numbers/s\s+{RATIO}"
    ),
    # bench_remote.py
    "remote.create_redis": Figure(
        "bench_remote", rf"^create\(\), order number from Redis: {RATIO}"
    ),
    "remote.create_database": Figure(
        "bench_remote", rf"^create\(\), order number from the database: {RATIO}"
    ),
    # bench_drf.py
    "drf.ratio": Figure("bench_drf", r"ratio ours/drf ([\d.]+)", "x"),
    # bench_metrics.py
    "metrics.create": Figure(
        "bench_metrics", r"^create\(\) with an order number\s+on .*?ratio ([\d.]+)", "x"
    ),
    # bench_database_ids.py
    "dbids.copy": Figure(
        "bench_database_ids", rf"^COPY\n  snowid default(?:\s+\S+){{3}}\s+{RATIO}"
    ),
    # bench_audit.py
    "audit.rate": Figure(
        "bench_audit", rf"^  snowid_audit \(every check\)(?:\s+\S+){{2}}\s+{RATE}"
    ),
    "audit.ratio": Figure(
        "bench_audit", r"^  keyset pass, no check \(reading alone\)(?:\s+\S+){3}\s+([\d.]+)", "x"
    ),
}


#: What the page says where a script has no recorded run yet.
NOT_RECORDED = "not recorded yet (``make bench``)"


def _output(script: str) -> str | None:
    path = RESULTS / f"{script}.txt"
    return path.read_text() if path.exists() else None


def run_text(script: str) -> str:
    """Which run ``script``'s figures come from, in words."""
    output = _output(script)
    if output is None:
        return f"``{script}.py``, {NOT_RECORDED}"
    first = output.splitlines()[0]
    run = RUN.match(first)
    if run is None:
        raise ValueError(f"benchmarks/results/{script}.txt: no run line ({first!r})")
    return (
        f"``{script}.py``, run of {run['when']} at commit {run['commit']} on {run['cpus']} "
        f"cores, load average {run['before']} before and {run['after']} after"
    )


def scripts() -> list[str]:
    """Every benchmark script, by name."""
    return sorted(path.stem for path in (RESULTS.parent).glob("bench_*.py"))


def output_rst(script: str) -> list[str]:
    """``script``'s recorded output as a block, after the run it is from."""
    output = _output(script)
    if output is None:
        return [f"``{script}.py``: {NOT_RECORDED}.", ""]
    body = output.splitlines()[1:]
    return [
        f"From {run_text(script)}:",
        "",
        ".. code-block:: text",
        "",
        *(f"   {line}" for line in body),
        "",
    ]


def figures_rst() -> list[str]:
    """The substitutions of the page: each script's run, then each figure."""
    lines = [f".. |{script}| replace:: {run_text(script)}" for script in scripts()]
    for name, figure in FIGURES.items():
        output = _output(figure.script)
        text = NOT_RECORDED if output is None else figure.read(output)
        lines.append(f".. |{name}| replace:: {text}")
    return lines
