"""The parts of the docs written from the code, kept in the pages themselves.

A page marks each such part::

    .. generated: checks (python docs/_ext/snowid_generated.py writes what follows)

    ...

    .. end generated: checks

``python docs/_ext/snowid_generated.py`` rewrites every part from the code (the settings
table, the check ids, the commands' options, the presets, the common mistakes, the
benchmarks' figures); ``--check`` only says which are out of date (exit 1). The pages
thus read the same on a repository's page as on the built site, and the docs build
never runs anything but this: ``make docs`` fails on a part that is out of date.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
START = re.compile(r"^\.\. generated: (?P<name>\S+)(?: .*)?$", re.MULTILINE)
WRITER = "python docs/_ext/snowid_generated.py"


def setup_django() -> None:
    """A minimal project for what the parts read (the commands' parsers import the app)."""
    import django
    import snowid_mistakes
    from django.conf import settings

    if not settings.configured:
        settings.configure(
            INSTALLED_APPS=snowid_mistakes.APPS,
            DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
            USE_TZ=True,
        )
        django.setup()


def producers() -> dict[str, Callable[[], list[str]]]:
    """Every part a page may hold, by name."""
    import snowid_figures
    import snowid_mistakes
    import snowid_reference

    parts: dict[str, Callable[[], list[str]]] = {
        "settings": snowid_reference.settings_rst,
        "checks": snowid_reference.checks_rst,
        "presets": snowid_reference.presets_rst,
        "capacity": snowid_reference.capacity_rst,
        "decimal-formats": snowid_reference.decimal_formats_rst,
        "mistakes": snowid_mistakes.mistakes_rst,
        "figures": snowid_figures.figures_rst,
    }
    for command in snowid_reference.COMMANDS:
        parts[f"command:{command}"] = lambda name=command: snowid_reference.command_rst(name)
    for script in snowid_figures.scripts():
        parts[f"output:{script}"] = lambda name=script: snowid_figures.output_rst(name)
    return parts


def _kept(name: str) -> bool:
    """A part left as it is: the benchmarks' where they are absent (an sdist has none)."""
    benchmarks = (ROOT / "benchmarks").is_dir()
    return (name == "figures" or name.startswith("output:")) and not benchmarks


def rewritten(text: str, parts: dict[str, Callable[[], list[str]]], cache: dict[str, str]) -> str:
    """``text`` with each of its parts written afresh (``cache``: parts already made)."""
    out, position = [], 0
    for start in START.finditer(text):
        name = start["name"]
        end = text.find(f"\n.. end generated: {name}\n", start.end())
        if end < 0:
            raise ValueError(f"'.. generated: {name}' has no '.. end generated: {name}'")
        if _kept(name):
            continue
        if name not in parts:
            raise ValueError(f"No generated part is called {name!r} (known: {sorted(parts)})")
        if name not in cache:
            cache[name] = "\n".join(line.rstrip() for line in parts[name]()).strip("\n")
        out += [text[position : start.end()], "\n\n", cache[name], "\n"]
        position = end
    return "".join([*out, text[position:]])


def stale_pages(*, write: bool = False) -> list[str]:
    """The pages (relative to docs/) whose parts differ from the code (``write``: fix them)."""
    setup_django()
    parts, cache, stale = producers(), {}, []
    for page in sorted(DOCS.rglob("*.rst")):
        if "_build" in page.parts:
            continue
        text = page.read_text()
        fresh = rewritten(text, parts, cache)
        if fresh != text:
            stale.append(str(page.relative_to(DOCS)))
            if write:
                page.write_text(fresh)
    return stale


def _check_at_build(app: Any) -> None:
    from sphinx.util import logging

    stale = stale_pages()
    if stale:
        logging.getLogger(__name__).warning(
            "generated parts out of date in %s: run `%s`", ", ".join(stale), WRITER
        )


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _check_at_build)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str]) -> int:
    sys.path[:0] = [str(ROOT), str(DOCS / "_ext")]
    check = "--check" in argv
    stale = stale_pages(write=not check)
    for page in stale:
        print(f"{'out of date' if check else 'rewrote'}: docs/{page}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
