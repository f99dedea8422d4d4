"""Every system-check id the code uses is in ``django_snowid.checks.CHECK_IDS`` (the docs'
checks page is generated from it), none is listed that the code never uses, and every
check's hint ends with the command that prints its entry."""

from __future__ import annotations

import re
import sys
from io import StringIO

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from django_snowid.checks import CHECK_IDS, HINT, check_pointer, error, warning
from tests.support import ROOT

PACKAGE = ROOT / "django_snowid"
sys.path.insert(0, str(PACKAGE.parent / "docs" / "_ext"))
import snowid_reference  # noqa: E402  (docs/_ext is no package)

# "django_snowid.E001", or a bare "E210" that the code prefixes (orders/checks.py).
USED = re.compile(r"""["'](?:django_snowid\.)?([EW]\d{3})["']""")


def ids_used_in_code() -> set[str]:
    used = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        if path.name == "checks.py" and path.parent == PACKAGE:
            before, rest = text.split("CHECK_IDS: dict[str, str] = {", 1)
            text = before + rest.split("\n}\n", 1)[1]  # all but the registry itself
        used |= {f"django_snowid.{id_}" for id_ in USED.findall(text)}
        used |= set(re.findall(r"django_snowid\.[EW]\d{3}", text))
    return used


def test_every_id_used_in_the_code_is_registered():
    missing = ids_used_in_code() - set(CHECK_IDS)
    assert not missing, f"add to django_snowid.checks.CHECK_IDS: {sorted(missing)}"


def test_every_registered_id_is_used():
    assert set(CHECK_IDS) - ids_used_in_code() == set()


def test_every_registered_id_says_what_it_means():
    for id_, text in CHECK_IDS.items():
        assert re.fullmatch(r"django_snowid\.[EW]\d{3}", id_)
        assert len(text.split()) >= 5, id_


def test_the_checks_page_has_an_entry_for_every_id():
    page = "\n".join(snowid_reference.checks_rst())
    for id_, text in CHECK_IDS.items():
        assert f".. _{id_}:\n\n{id_}\n" in page
        assert text in page


def test_hints_end_with_the_command_that_prints_their_entry():
    assert check_pointer("django_snowid.E001") == "python manage.py snowid_explain E001"
    assert HINT.format(id="django_snowid.W201").endswith("snowid_explain W201")
    assert error("msg", "django_snowid.E205").hint.endswith("snowid_explain E205")
    assert warning("msg", "django_snowid.W010").hint.endswith("snowid_explain W010")


def test_the_hints_of_real_checks_point_at_their_entries():
    with override_settings(
        SNOWID_WORKER_ID=5000,
        SNOWID_ORDER_BACKEND="carrier pigeon",
        SNOWID_ORDER_MAX_WAIT_MS="2s",
        SNOWID_WORKER_LEASE_TTL_S=0,
        SNOWID_LAYOUTS={"x": {"time_bits": 99}},
    ):
        messages = [
            m for m in checks.run_checks(databases=[]) if m.id and m.id.startswith("django_snowid.")
        ]
    assert {"django_snowid.E004", "django_snowid.E205", "django_snowid.E211"} <= {
        m.id for m in messages
    }
    for message in messages:
        assert message.id in CHECK_IDS
        assert message.hint.endswith(check_pointer(message.id)), message


def test_the_pointer_of_a_hint_runs_and_prints_the_entry():
    """What a person copies from a hint: the command, its id, and the entry's text."""
    command, _, id_ = check_pointer("django_snowid.E900").rpartition(" ")
    assert command.startswith("python manage.py ")
    out = StringIO()
    call_command(command.split()[-1], id_, stdout=out)
    text = " ".join(out.getvalue().split())
    assert text.startswith("django_snowid.E900 (error)")
    assert "object-id column cannot hold a 64-bit id" in text
    assert "``" not in text and ":doc:" not in text and "docs/adopting.rst" in text


@pytest.mark.parametrize("typed", ["e202", "E202", "django_snowid.E202", " E202 "])
def test_explain_takes_an_id_as_a_person_types_it(typed):
    out = StringIO()
    call_command("snowid_explain", typed, stdout=out)
    assert out.getvalue().startswith("django_snowid.E202 (error)\n")


def test_explain_without_an_id_lists_every_one():
    out = StringIO()
    call_command("snowid_explain", stdout=out)
    assert re.findall(r"^(django_snowid\.[EW]\d{3}) ", out.getvalue(), re.M) == list(CHECK_IDS)


def test_explain_names_an_unknown_id_and_the_close_ones():
    with pytest.raises(CommandError, match=r"'E2022' is no check id.*Did you mean E202"):
        call_command("snowid_explain", "E2022", stdout=StringIO())
