"""Run a benchmark script and keep what it printed, with its run, in ``benchmarks/results/``.

``python -m benchmarks.record benchmarks/bench_orders.py [its options]`` runs the script
as ``make bench`` does, shows its output, and writes ``benchmarks/results/bench_orders.txt``:
a first line saying which run it was (date, commit, Python, Django, the machine's load),
then the script's output. docs/performance.rst quotes its figures from these files
(``python docs/_ext/snowid_reference.py`` rewrites them into the page), so the page shows
one figure per measurement, each from the run it names. A script that fails leaves the
file it had.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Where the results go (``SNOWID_BENCH_RESULTS`` moves them, for the tests).
RESULTS = Path(os.environ.get("SNOWID_BENCH_RESULTS", ROOT / "benchmarks" / "results"))


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def run_line(script: str, args: list[str], load_before: float) -> str:
    """The first line of a results file: which run the figures below come from."""
    import django

    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = _git(
        "status", "--porcelain", "--", "django_snowid", "benchmarks", ":!benchmarks/results"
    )
    changed = " with uncommitted changes" if dirty else ""
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_after = os.getloadavg()[0]
    options = f" {' '.join(args)}" if args else ""
    return (
        f"# {script}{options}: run of {when}, commit {commit}{changed}, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"Django {django.get_version()}, {os.cpu_count()} CPUs, "
        f"load average {load_before:.1f} before, {load_after:.1f} after"
    )


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: python -m benchmarks.record benchmarks/bench_x.py [options]", file=sys.stderr)
        return 2
    script, args = sys.argv[1], sys.argv[2:]
    load_before = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, script, *args], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    sys.stdout.write(done.stdout)
    if done.returncode != 0:
        return done.returncode
    name = Path(script).stem
    RESULTS.mkdir(exist_ok=True)
    header = run_line(f"{name}.py", args, load_before)
    (RESULTS / f"{name}.txt").write_text(f"{header}\n{done.stdout}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
