"""The reference parts of the docs, made from the code so that they cannot drift from it.

``settings_rst()`` is the settings table from ``django_snowid.conf.SnowidSettings`` (name,
type from the annotation, default, meaning), one table per group comment of the class;
``checks_rst()`` one entry per id of ``django_snowid.checks.CHECK_IDS`` (what
``manage.py snowid_explain`` prints); ``command_rst()`` a command's options, from its
parser; ``presets_rst()`` the preset layouts and when their time bits run out.
``snowid_generated.py`` writes them into the pages; the tests read them too.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

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
    "snowid_explain": "django_snowid.management.commands.snowid_explain",
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
        # A fixed width: the page must not depend on the terminal that wrote it.
        formatter_class=lambda prog: argparse.RawDescriptionHelpFormatter(prog, width=88),
    )
    command.add_arguments(parser)
    help_text = parser.format_help()
    lines = [" ".join(str(command.help).split()), "", ".. code-block:: text", ""]
    lines += [f"   {line}".rstrip() for line in help_text.splitlines()]
    common = "``--verbosity``, ``--settings``, ``--pythonpath``, ``--traceback``, ``--no-color``"
    return [*lines, "", f"And Django's common options ({common}, ...).", ""]


def presets_rst() -> list[str]:
    """The preset layouts: bits, capacity, and the first instant their time bits cannot
    count (with the default epoch)."""
    from django_snowid.core import PRESETS

    rows = []
    for name, layout in PRESETS.items():
        sequence = str(layout.sequence_bits)
        if layout.shard_bits:
            sequence += f", then ``shard`` {layout.shard_bits}"
        parts = layout.node_parts
        workers = " x ".join(str(1 << p.bits) for p in parts) if len(parts) > 1 else None
        rows.append(
            (
                f"``{name}``" + (" (default)" if name == "classic" else ""),
                f"{layout.time_bits} bits of {layout.time_unit_ms} ms",
                ", ".join(f"``{p.name}`` {p.bits}" for p in parts),
                sequence,
                f"{layout.ids_per_second:,}",
                workers or f"{1 << layout.node_bits:,}",
                layout.exhausted_at.isoformat(timespec="seconds").replace("+00:00", "Z"),
            )
        )
    header = (
        "preset",
        "time",
        "node",
        "sequence",
        "ids per second per worker",
        "workers",
        "time bits run out (UTC)",
    )
    return _list_table(header, rows)


def _list_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        lines += [f"   {'*' if i == 0 else ' '} - {cell}" for i, cell in enumerate(row)]
    return [*lines, ""]


def capacity_rst() -> list[str]:
    """What the layouts and order-number formats hold: limits made of bits, not costs."""
    from django_snowid.core import PRESETS
    from django_snowid.core.order_format import OrderNumberFormat

    ids = [
        (
            f"``{name}``",
            f"{layout.ids_per_second:,}",
            f"{1 << layout.node_bits:,}",
            f"{layout.ids_per_second * (1 << layout.node_bits):,}",
        )
        for name, layout in PRESETS.items()
    ]
    formats = {
        "binary, 14 + 4 bits (default)": OrderNumberFormat(),
        "binary, 19 + 4 bits": OrderNumberFormat(sequence_bits=19),
        "decimal, 5 + 2 digits": OrderNumberFormat(packing="decimal"),
        "decimal, 4 + 2 digits + check digit": OrderNumberFormat(
            packing="decimal", sequence_digits=4, check_digit="luhn"
        ),
    }
    orders = [
        (name, f"{fmt.max_sequence:,}", f"{fmt.shard_count:,}") for name, fmt in formats.items()
    ]
    return [
        *_list_table(
            ("preset", "ids per second per worker", "worker ids", "ids per second in total"),
            ids,
        ),
        *_list_table(("order-number format", "numbers per second per stream", "shards"), orders),
    ]


def _fits_until(fmt: Any) -> str:
    """The last year whose numbers of ``fmt`` fit a signed 64-bit integer."""
    from django_snowid.core.order_format import MAX_INT64

    factor = 10 ** (fmt.sequence_digits + fmt.shard_digits)
    fitting = [
        year
        for year in range(2000, 2100)
        if fmt.with_check_digit(((year % 100) * 10**10 + 1231235959) * factor + factor - 1)
        <= MAX_INT64
    ]
    return (
        "always (until stems wrap in 2100)"
        if len(fitting) == 100
        else f"until the end of {fitting[-1]}"
    )


def decimal_formats_rst() -> list[str]:
    """The decimal formats with and without a check digit: digits, capacity, lifetime."""
    from django_snowid.core.order_format import OrderNumberFormat

    rows = []
    for sequence, shard, check in ((5, 2, None), (4, 2, "luhn"), (5, 1, "luhn"), (4, 1, "luhn")):
        fmt = OrderNumberFormat(
            packing="decimal", sequence_digits=sequence, shard_digits=shard, check_digit=check
        )
        name = f"{sequence} sequence + {shard} shard" + (" + check digit" if check else "")
        if (sequence, shard, check) == (5, 2, None):
            name += " (default, no check digit)"
        digits = 12 + sequence + shard + (1 if check else 0)
        rows.append(
            (name, str(digits), f"{fmt.max_sequence:,}", f"{fmt.shard_count:,}", _fits_until(fmt))
        )
    header = (
        "decimal format",
        "digits",
        "numbers per second",
        "shards",
        "fits a signed 64-bit integer",
    )
    return _list_table(header, rows)
