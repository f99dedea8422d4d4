"""django_snowid.sequences.compat against django-sequences itself, on PostgreSQL.

    python benchmarks/bench_sequences_compat.py [--calls 4000] [--repeat 3]

The same calls through both modules, measured in the same run, interleaved
(benchmarks/timing.py): ``get_next_value()`` in autocommit (one committed statement a
value: the target, ours at least as fast, ratio >= 1.0), and, for information,
``get_next_value()`` inside one transaction, ``get_next_values(10)``, ``get_last_value()``
and the cycling path (``reset_value``). Needs PostgreSQL (127.0.0.1:5432).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
os.environ.setdefault("SNOWID_BENCH_DB", "postgresql")

from benchmarks.timing import interleaved_rates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import django

    django.setup()
    import sequences
    from django.db import connection, transaction

    from django_snowid.sequences import compat

    # A database of this run's own: other benchmarks may be using "test_snowid_bench".
    connection.settings_dict["NAME"] = f"snowid_bench_compat_{os.getpid()}"
    old = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    rows: dict[str, tuple[list[float], list[float]]] = {}

    def measure(label: str, theirs: object, ours: object, calls: int) -> None:
        mine, their = interleaved_rates([ours, theirs], calls)  # type: ignore[list-item]
        rows.setdefault(label, ([], []))
        rows[label][0].append(mine)
        rows[label][1].append(their)

    try:
        for api in (sequences, compat):  # each sequence's row exists before timing
            api.get_next_value("bench")
            api.get_next_value("cycle", 0, 1000)
            api.get_next_values(10, "batch")
        for _ in range(args.repeat):
            measure(
                "get_next_value (autocommit)",
                lambda i: sequences.get_next_value("bench"),
                lambda i: compat.get_next_value("bench"),
                args.calls,
            )
            with transaction.atomic():
                measure(
                    "get_next_value (in a transaction)",
                    lambda i: sequences.get_next_value("bench"),
                    lambda i: compat.get_next_value("bench"),
                    args.calls,
                )
            measure(
                "get_next_values(10)",
                lambda i: sequences.get_next_values(10, "batch"),
                lambda i: compat.get_next_values(10, "batch"),
                args.calls // 2,
            )
            measure(
                "get_next_value(reset_value=)",
                lambda i: sequences.get_next_value("cycle", 0, 1000),
                lambda i: compat.get_next_value("cycle", 0, 1000),
                args.calls // 4,
            )
            measure(
                "get_last_value",
                lambda i: sequences.get_last_value("bench"),
                lambda i: compat.get_last_value("bench"),
                args.calls,
            )
    finally:
        connection.creation.destroy_test_db(old, verbosity=0)

    med = statistics.median
    print(
        f"compat against django-sequences on {connection.vendor}, {args.repeat} runs of "
        f"{args.calls} calls (median calls/s; ratio ours/theirs, min-max)"
    )
    for label, (ours, theirs) in rows.items():
        ratios = [o / t for o, t in zip(ours, theirs, strict=True)]
        line = (
            f"{label:34} compat {med(ours):9,.0f}/s   django-sequences {med(theirs):9,.0f}/s"
            f"   ratio {med(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
        )
        if label == "get_next_value (autocommit)":
            line += f"  target >= 1.0: {'ok' if med(ratios) >= 1.0 else 'MISS'}"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
