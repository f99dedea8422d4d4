"""What the documentation says of the code, held to the code: the commands it lists, the
tables it names."""

from __future__ import annotations

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
    assert set(re.findall(r"^\.\. snowid-command:: (\w+)$", page, re.MULTILINE)) == set(found)
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
        assert call == call_text(name, getattr(compat, name)) == call_text(
            name, getattr(theirs, name)
        )
        assert our_call == call_text(our_name, getattr(ours, our_name))
