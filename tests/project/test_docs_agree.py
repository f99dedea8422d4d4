"""What the documentation says of the code, held to the code: the commands it lists, the
tables it names, the calls and exit statuses it gives, and the parts written from the code
(reference tables, presets, common mistakes, benchmark figures)."""

from __future__ import annotations

import os
import re
import sys

from tests.support import ROOT

DOCS = [*sorted((ROOT / "docs").rglob("*.rst")), ROOT / "README.md"]


def test_every_command_has_its_entry_on_the_commands_page():
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from snowid_reference import COMMANDS, command_rst
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))
    package = ROOT / "django_snowid"
    found = {
        path.stem: ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for pattern in ("management/commands/snowid_*.py", "*/management/commands/snowid_*.py")
        for path in package.glob(pattern)
    }
    assert found == COMMANDS
    page = (ROOT / "docs" / "reference" / "commands.rst").read_text()
    marked = re.findall(r"^\.\. generated: command:(\w+) ", page, re.MULTILINE)
    assert set(marked) == set(found)
    for name in found:
        assert f"manage.py {name}" in "\n".join(command_rst(name)), name


def test_the_tables_the_docs_name_are_the_models_tables():
    from django.apps import apps

    tables = {model._meta.db_table for model in apps.get_models(include_auto_created=True)}
    named = {
        (path.name, table)
        for path in DOCS
        for table in re.findall(r"\btable ``(\w+)``", path.read_text())
    }
    assert named
    assert [(page, table) for page, table in sorted(named) if table not in tables] == []


def call_text(name: str, function: object) -> str:
    """``name(a, b="x", *, c=None)``: a call's parameters as the docs write them."""
    import inspect

    parts, star = [], False
    for parameter in inspect.signature(function).parameters.values():  # type: ignore[arg-type]
        if parameter.kind is parameter.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        default = parameter.default
        if default is parameter.empty:
            parts.append(parameter.name)
        else:
            shown = f'"{default}"' if isinstance(default, str) else repr(default)
            parts.append(f"{parameter.name}={shown}")
    return f"{name}({', '.join(parts)})"


def test_the_django_sequences_mapping_shows_the_calls_as_the_code_takes_them():
    import pytest

    import django_snowid.sequences as ours
    from django_snowid.sequences import compat

    theirs = pytest.importorskip("sequences")
    page = (ROOT / "docs" / "django-sequences.rst").read_text()
    rows = re.findall(
        r"^   \* - ``((\w+)\(.*\))``\n     - ``\2\(\.\.\.\)``\n     - ``((\w+)\(.*\))``$",
        page,
        re.MULTILINE,
    )
    assert [row[1] for row in rows] == [
        "get_next_value",
        "get_next_values",
        "get_last_value",
        "delete",
        "Sequence",
    ]
    for call, name, our_call, our_name in rows:
        assert (
            call == call_text(name, getattr(compat, name)) == call_text(name, getattr(theirs, name))
        )
        assert our_call == call_text(our_name, getattr(ours, our_name))


def _ext(name: str):
    import importlib

    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))


def test_the_parts_written_from_the_code_are_up_to_date():
    """The settings, checks and commands tables, the presets, the common mistakes and the
    benchmarks' figures in the pages are what the code writes now (so a repository's page
    shows them as the site does)."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "docs/_ext/snowid_generated.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, (
        done.stdout + done.stderr + ("\nrun `python docs/_ext/snowid_generated.py`")
    )


def test_a_part_is_rewritten_between_its_markers_and_nothing_else():
    generated = _ext("snowid_generated")
    page = "Intro.\n\n.. generated: x (note)\n\nold\n\n.. end generated: x\n\nOutro.\n"
    fresh = generated.rewritten(page, {"x": lambda: ["new", ""]}, {})
    assert fresh == "Intro.\n\n.. generated: x (note)\n\nnew\n\n.. end generated: x\n\nOutro.\n"
    assert generated.rewritten(fresh, {"x": lambda: ["new"]}, {}) == fresh
    import pytest

    with pytest.raises(ValueError, match="No generated part is called 'y'"):
        generated.rewritten(page.replace(": x", ": y"), {"x": lambda: []}, {})


def test_every_reference_page_the_readme_links_holds_its_content():
    readme = (ROOT / "README.md").read_text()
    for page in ("settings", "checks", "commands"):
        assert f"](docs/reference/{page}.rst)" in readme
        text = (ROOT / "docs" / "reference" / f"{page}.rst").read_text()
        assert ".. snowid-" not in text  # no directive that a repository page leaves empty
    checks = (ROOT / "docs" / "reference" / "checks.rst").read_text()
    assert "django_snowid.E202\n~~~~~~~~~~~~~~~~~~" in checks
    settings = (ROOT / "docs" / "reference" / "settings.rst").read_text()
    assert "``SNOWID_ORDER_BLOCK_MAX``" in settings


def test_the_exit_statuses_the_docs_give_are_the_commands():
    from django.core.management.base import CommandError

    from django_snowid.management.commands import snowid_audit

    audit = (ROOT / "docs" / "audit.rst").read_text()
    assert f"- ``{snowid_audit.FOUND}``: at least one finding" in audit
    assert f"- ``{snowid_audit.BAD_INPUT}``: bad input" in audit
    commands = " ".join((ROOT / "docs" / "reference" / "commands.rst").read_text().split())
    failed = CommandError("x").returncode
    assert f"exit status {failed} (``snowid_audit``: {snowid_audit.BAD_INPUT}," in commands


def test_every_common_mistake_is_answered_by_its_check():
    mistakes = _ext("snowid_mistakes")
    from django_snowid.checks import CHECK_IDS

    ids = [mistake.id_ for mistake in mistakes.MISTAKES]
    assert len(ids) == len(set(ids)) and set(ids) <= set(CHECK_IDS)
    page = (ROOT / "docs" / "mistakes.rst").read_text()
    for id_ in ids:
        assert f"({id_})" in page and f"snowid_explain {id_.split('.')[1]}" in page


def test_order_numbers_are_said_to_increase_per_process_as_blocks_are_the_default():
    """Blocks are on by default: the pages that sum order numbers up say they increase in
    each process, not in the order issued, and give the setting that orders them all."""
    from django_snowid.conf import SnowidSettings

    (block_max,) = [s for s in SnowidSettings.table() if s.name == "SNOWID_ORDER_BLOCK_MAX"]
    assert block_max.default > 1
    for path in ("README.md", "docs/index.rst", "docs/guarantees.rst"):
        text = " ".join((ROOT / path).read_text().split()).replace("`", "")
        assert "keep increasing" not in text, path
        assert "in each process" in text and "SNOWID_ORDER_BLOCK_MAX = 1" in text, path
    orders = " ".join((ROOT / "docs" / "orders.rst").read_text().split())
    assert f"``SNOWID_ORDER_BLOCK_MAX`` ({block_max.default:,} by default;" in orders


#: Figures still typed, of features documented alongside this mechanism: their scripts
#: record as the others do (make bench); quoting them is the next step of their pages.
UNWIRED_PAGES = ("adopting.rst", "graphql.rst", "paging.rst", "testing.rst")
UNWIRED_SECTIONS = (
    "Ids in tests that move the clock",
    "Adopting Snowflake ids under writes",
    "Pages and feeds by ids",
)
UNWIRED_ROWS = (
    "a GraphQL query",
    "a page 9,000,000",
    "the settled id",
    "polling a feed",
    "``snowid_adopt``",
)


def _wired_text(page: str) -> str:
    """performance.rst without its generated parts and what is not wired yet."""
    text = re.sub(r"\.\. generated: (\S+).*?\.\. end generated: \1", "", page, flags=re.S)
    for title in UNWIRED_SECTIONS:
        text = re.sub(
            rf"^{re.escape(title)}\n~+\n.*?(?=^\S.*\n~+\n|\Z)", "", text, flags=re.S | re.M
        )
    rows = "|".join(re.escape(row) for row in UNWIRED_ROWS)
    return re.sub(rf"^   \* - (?:{rows}).*?(?=^   \* - |^\S)", "", text, flags=re.S | re.M)


def test_no_page_types_a_measured_figure():
    """Ratios, rates and per-call times come from the recorded runs (substitutions and
    output blocks of docs/performance.rst, written by snowid_generated.py); other pages
    link to them."""
    measured = re.compile(r"\d\.\d+x\b|\d[\d,.]*\s?(?:µs|/s)\b")
    found = []
    for path in DOCS:
        if path.name in UNWIRED_PAGES or "_build" in path.parts:
            continue
        text = _wired_text(path.read_text())
        found += [(path.name, figure) for figure in measured.findall(text)]
    assert found == []
    wired = _wired_text((ROOT / "docs" / "performance.rst").read_text())
    assert "|orders.create|" in wired and "|metrics.create|" in wired  # not cut away


def test_every_figure_the_performance_page_quotes_is_read_from_a_run():
    page = (ROOT / "docs" / "performance.rst").read_text()
    figures = _ext("snowid_figures")
    used = set(re.findall(r"\|([\w.]+)\|", page))
    assert used - set(figures.scripts()) <= set(figures.FIGURES)
    assert {"orders.create", "sequences.orders_x", "remote.create_redis"} <= used
