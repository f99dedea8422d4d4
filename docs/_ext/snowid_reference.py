"""The reference pages generated from the code, so that they cannot drift from it.

``.. snowid-settings::`` writes the settings table from ``django_snowid.conf.SnowidSettings``
(name, type from the annotation, default, meaning), one table per group comment of the
class; ``.. snowid-checks::`` writes one entry per id of ``django_snowid.checks.CHECK_IDS``,
each with the anchor that the checks' hints link to (``#django-snowid-e001``).

``settings_rst()`` and ``checks_rst()`` return the reST the directives parse;
tests/test_settings.py and tests/test_check_ids.py read them too.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

GROUP = re.compile(r"^\s+#(?!:)[\s-]*(?P<title>\w.*?)\s*$")
ATTRIBUTE = re.compile(r"^\s+(?P<name>[A-Z][A-Z0-9_]*)\s*:")


def _type_of(annotation: Any) -> str:
    """``Setting[int | None]`` (a string, under ``from __future__ import annotations``)
    -> ``int | None``."""
    text = annotation if isinstance(annotation, str) else repr(annotation)
    match = re.fullmatch(r"Setting\[(.*)\]", text)
    return match.group(1) if match else text


def _default_of(setting: Any) -> str:
    if setting.unset is not None and not setting.default:
        summary = (inspect.getdoc(setting.unset) or "computed").split("\n\n")[0]
        return "computed: " + " ".join(summary.split())
    default = setting.default
    if hasattr(default, "isoformat"):  # the epoch
        default = default.isoformat().replace("+00:00", "Z")
    return f"``{default!r}``"


def setting_groups() -> list[tuple[str, list[Any]]]:
    """The settings in the order of the class, under its group comments."""
    from django_snowid.conf import SnowidSettings

    table = {setting.name: setting for setting in SnowidSettings.table()}
    groups: list[tuple[str, list[Any]]] = [("General", [])]
    for line in inspect.getsource(SnowidSettings).splitlines():
        if group := GROUP.match(line):
            groups.append((group["title"][:1].upper() + group["title"][1:], []))
        elif (name := ATTRIBUTE.match(line)) and f"SNOWID_{name['name']}" in table:
            groups[-1][1].append(table[f"SNOWID_{name['name']}"])
    return [(title, rows) for title, rows in groups if rows]


def settings_rst() -> list[str]:
    from django_snowid.conf import SnowidSettings

    annotations = inspect.get_annotations(SnowidSettings)
    lines: list[str] = []
    for title, rows in setting_groups():
        lines += [title, "-" * len(title), ""]
        lines += [".. list-table::", "   :header-rows: 1", "   :widths: 30 20 15 35", ""]
        lines += ["   * - setting", "     - type", "     - default", "     - meaning"]
        for setting in rows:
            short = setting.name.removeprefix("SNOWID_")
            lines += [
                f"   * - .. _{setting.name}:",
                "",
                f"       ``{setting.name}``",
                f"     - ``{_type_of(annotations[short])}``",
                f"     - {_default_of(setting)}",
                f"     - {setting.meaning}",
            ]
        lines.append("")
    return lines


def check_groups() -> list[tuple[str, list[tuple[str, str]]]]:
    """The check ids in the order of ``CHECK_IDS``, under its group comments."""
    from django_snowid import checks

    source = inspect.getsource(checks).split("CHECK_IDS: dict[str, str] = {", 1)[1]
    source = source.split("\n}\n", 1)[0]
    groups: list[tuple[str, list[tuple[str, str]]]] = [("General", [])]
    for line in source.splitlines():
        if group := GROUP.match(line):
            groups.append((group["title"][:1].upper() + group["title"][1:], []))
        elif id_ := re.match(r'^\s+"(django_snowid\.[EW]\d+)":', line):
            groups[-1][1].append((id_[1], checks.CHECK_IDS[id_[1]]))
    listed = {id_ for _, rows in groups for id_, _ in rows}
    rest = [(id_, text) for id_, text in checks.CHECK_IDS.items() if id_ not in listed]
    if rest:  # entries added in a way the source scan does not see
        groups.append(("Other", rest))
    return [(title, rows) for title, rows in groups if rows]


def checks_rst() -> list[str]:
    lines: list[str] = []
    for title, rows in check_groups():
        lines += [title, "-" * len(title), ""]
        for id_, text in rows:
            lines += [f".. _{id_}:", "", id_, "~" * len(id_), "", text, ""]
    return lines


#: The app's management commands, and the module of each.
COMMANDS = {
    "snowid_decode": "django_snowid.management.commands.snowid_decode",
    "snowid_recover": "django_snowid.management.commands.snowid_recover",
    "snowid_adopt": "django_snowid.management.commands.snowid_adopt",
    "snowid_workers": "django_snowid.management.commands.snowid_workers",
    "snowid_database_ids": "django_snowid.management.commands.snowid_database_ids",
    "snowid_audit": "django_snowid.management.commands.snowid_audit",
    "snowid_sequences": "django_snowid.management.commands.snowid_sequences",
}


def command_rst(name: str) -> list[str]:
    """A command's one-line help and its ``--help`` text, from its own parser."""
    import argparse
    import importlib

    command = importlib.import_module(COMMANDS[name]).Command()
    # The command's own arguments, without Django's common options (--verbosity, ...).
    parser = argparse.ArgumentParser(
        prog=f"manage.py {name}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_arguments(parser)
    help_text = parser.format_help()
    lines = [" ".join(str(command.help).split()), "", ".. code-block:: text", ""]
    lines += [f"   {line}".rstrip() for line in help_text.splitlines()]
    common = "``--verbosity``, ``--settings``, ``--pythonpath``, ``--traceback``, ``--no-color``"
    return [*lines, "", f"And Django's common options ({common}, ...).", ""]


class CommandDirective(SphinxDirective):
    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        container = nodes.section()
        container.document = self.state.document
        content = StringList(command_rst(self.arguments[0]), source=f"<{self.name}>")
        self.state.nested_parse(content, self.content_offset, container)
        return list(container.children)


class _Generated(SphinxDirective):
    has_content = False

    def lines(self) -> list[str]:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        container = nodes.section()
        container.document = self.state.document
        content = StringList(self.lines(), source=f"<{self.name}>")
        nested_parse_with_titles(self.state, content, container)
        return list(container.children)


class SettingsDirective(_Generated):
    def lines(self) -> list[str]:
        return settings_rst()


class ChecksDirective(_Generated):
    def lines(self) -> list[str]:
        return checks_rst()


def _setup_django(app: Sphinx) -> None:
    """The commands' parsers import the app: a minimal project for them."""
    import django
    from django.conf import settings

    if not settings.configured:
        settings.configure(
            INSTALLED_APPS=[
                "django.contrib.contenttypes",
                "django.contrib.auth",
                "django_snowid",
                "django_snowid.sequences",
            ],
            DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        )
        django.setup()


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("snowid-settings", SettingsDirective)
    app.add_directive("snowid-checks", ChecksDirective)
    app.add_directive("snowid-command", CommandDirective)
    app.connect("builder-inited", _setup_django)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
