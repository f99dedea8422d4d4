"""Every system-check id the code uses is in ``django_snowid.checks.CHECK_IDS`` (the docs'
checks page is generated from it), none is listed that the code never uses, and every
check's hint ends with the link to its entry."""

from __future__ import annotations

import re
import sys

from django.core import checks
from django.test import override_settings

from django_snowid.checks import CHECK_IDS, HINT, check_url, error, warning
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


def test_hints_end_with_the_link_to_their_entry():
    url = "https://django-snowid.readthedocs.io/en/latest/reference/checks.html"
    assert check_url("django_snowid.E001") == f"{url}#django-snowid-e001"
    assert HINT.format(id="django_snowid.W201").endswith(f"{url}#django-snowid-w201")
    assert error("msg", "django_snowid.E205").hint.endswith("#django-snowid-e205")
    assert warning("msg", "django_snowid.W010").hint.endswith("#django-snowid-w010")


def test_the_hints_of_real_checks_link_to_their_entries():
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
        assert message.hint.endswith(check_url(message.id)), message


def test_the_links_name_the_anchors_sphinx_makes():
    """The page's targets (``.. _django_snowid.E001:``) get docutils' ids."""
    from docutils.nodes import make_id

    for id_ in CHECK_IDS:
        assert check_url(id_).endswith(f"#{make_id(id_)}"), id_
