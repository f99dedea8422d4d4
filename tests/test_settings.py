"""The settings table (``django_snowid.conf``): every setting has a meaning, and the docs'
settings page, generated from the table, lists every setting with its type and default."""

from __future__ import annotations

import sys

import pytest

from django_snowid.conf import SnowidSettings, conf
from tests.support import ROOT

sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import snowid_reference


def test_every_setting_has_a_meaning():
    for setting in SnowidSettings.table():
        assert setting.name.startswith("SNOWID_")
        assert len(setting.meaning.split()) >= 3, f"{setting.name}: say what it means"


def test_the_settings_page_lists_every_setting_with_type_default_and_meaning():
    page = "\n".join(snowid_reference.settings_rst())
    annotations = SnowidSettings.__annotations__
    for setting in SnowidSettings.table():
        assert f".. _{setting.name}:" in page, setting.name
        row = page.split(f".. _{setting.name}:", 1)[1].split("   * - ", 1)[0]
        kind = annotations[setting.name.removeprefix("SNOWID_")]
        assert snowid_reference._type_of(kind) in row, setting.name
        assert setting.meaning in row, setting.name
        if setting.unset is None:
            assert repr(setting.default) in row or setting.name == "SNOWID_EPOCH", setting.name


def test_a_setting_without_a_meaning_fails(monkeypatch):
    """The check above can fail: a setting with an empty meaning is caught."""
    from django_snowid.conf import Setting

    bare = Setting(1, "")
    bare.__set_name__(SnowidSettings, "BARE")
    monkeypatch.setattr(SnowidSettings, "BARE", bare, raising=False)
    with pytest.raises(AssertionError, match="SNOWID_BARE"):
        test_every_setting_has_a_meaning()


def test_an_unset_setting_reads_as_its_default(settings):
    del settings.SNOWID_WORKER_ID
    assert conf.WORKER_ID == SnowidSettings.WORKER_ID.default == 0
    settings.SNOWID_WORKER_ID = 5
    assert conf.WORKER_ID == 5
