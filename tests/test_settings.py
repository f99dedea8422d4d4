"""The settings table (``django_snowid.conf``) and the README's list of settings agree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from django_snowid.conf import SnowidSettings, conf
from django_snowid.core.layout import parse_epoch

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_rows() -> dict[str, str]:
    """Each setting the README's "Settings" table lists, with its default column."""
    section = README.read_text().split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(SNOWID_[A-Z_]+)` \| [^|]* \| ([^|]*) \|", section, re.MULTILINE)
    return {name: default.strip().strip("`") for name, default in rows}


def test_the_readme_lists_every_setting_of_the_table_and_no_other():
    assert set(readme_rows()) == {setting.name for setting in SnowidSettings.table()}


def test_the_readme_gives_the_table_s_defaults():
    rows = readme_rows()
    compared = 0
    for setting in SnowidSettings.table():
        try:
            written = ast.literal_eval(rows[setting.name])
        except (ValueError, SyntaxError):  # a date or a path: said in words
            continue
        if setting.name == "SNOWID_EPOCH":
            written = parse_epoch(written)
        assert written == setting.default, setting.name
        compared += 1
    assert compared > 25


def test_an_unset_setting_reads_as_its_default(settings):
    del settings.SNOWID_WORKER_ID
    assert conf.WORKER_ID == SnowidSettings.WORKER_ID.default == 0
    settings.SNOWID_WORKER_ID = 5
    assert conf.WORKER_ID == 5
