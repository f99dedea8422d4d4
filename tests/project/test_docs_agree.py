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
