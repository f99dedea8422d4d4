"""Public ids: opaque strings for ids, looked up through the pk, 404 for anything else."""

from __future__ import annotations

import sys

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings
from hypothesis import example, given
from hypothesis import strategies as st

from django_snowid.exceptions import InvalidPublicId
from django_snowid.ids.checks import check_public_ids
from django_snowid.ids.publicids import DEFAULT_ALPHABET, decode_id, encode_id
from tests.support import ROOT
from tests.testapp.models import Product, Ticket

MAX_ID = 2**63 - 1


@given(st.integers(0, MAX_ID))
def test_round_trip_for_any_id(value):
    text = encode_id(value)
    assert len(text) >= 8
    assert decode_id(text) == value


@given(st.text(max_size=300))
@example("")
@example("0" * 1000)
@example("9naHVckpbdZR/")
@example("ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ")
def test_random_strings_decode_or_raise_our_error_only(text):
    try:
        value = decode_id(text)
    except InvalidPublicId:
        return
    assert encode_id(value) == text  # accepted: then it is the one canonical string


def test_neighbouring_ids_do_not_look_neighbouring():
    first, second = encode_id(7_400_000_000_000_000_000), encode_id(7_400_000_000_000_000_001)
    assert first[:-1] != second[:-1]


@pytest.mark.parametrize("value", [-1, 2**63, "12", 1.0, True, None])
def test_encode_refuses_what_is_not_an_id(value):
    with pytest.raises(InvalidPublicId):
        encode_id(value)


def test_non_canonical_and_multi_number_strings_are_refused():
    from django.conf import settings
    from sqids import Sqids

    alphabet = settings.SNOWID_PUBLIC_ID_ALPHABET
    unpadded = Sqids(alphabet=alphabet, min_length=0).encode([5])
    assert Sqids(alphabet=alphabet, min_length=8).decode(unpadded) == [5]  # sqids accepts it
    two_numbers = Sqids(alphabet=alphabet, min_length=8).encode([1, 2])
    for text in (unpadded, two_numbers, "abc"):
        with pytest.raises(InvalidPublicId):
            decode_id(text)


def test_another_alphabet_gives_other_strings():
    text = encode_id(123456789)
    with override_settings(SNOWID_PUBLIC_ID_ALPHABET=DEFAULT_ALPHABET[::-1]):
        assert encode_id(123456789) != text


def test_no_alphabet_is_a_clear_error():
    with (
        override_settings(SNOWID_PUBLIC_ID_ALPHABET=None),
        pytest.raises(ImproperlyConfigured, match="SNOWID_PUBLIC_ID_ALPHABET"),
    ):
        encode_id(1)


@pytest.mark.django_db
def test_path_converter_finds_the_row_and_404s_otherwise(client):
    product = Product.objects.create(name="tea")
    url = f"/p/{encode_id(product.pk)}/"
    response = client.get(url)
    assert response.status_code == 200
    assert response.json() == {"id": str(product.pk), "name": "tea", "url": url}
    other = encode_id(product.pk + 1)
    for bad in (other, "not-a-public-id", "%00", "9" * 300, str(product.pk)):
        assert client.get(f"/p/{bad}/").status_code == 404, bad


@pytest.mark.django_db
def test_manager_helper_filters_through_the_pk(client, django_assert_num_queries):
    ticket = Ticket.objects.create(title="t")
    text = encode_id(ticket.pk)
    with django_assert_num_queries(1):
        assert Ticket.objects.get_by_public_id(text) == ticket
    assert list(Ticket.objects.public_id("nope!")) == []
    with pytest.raises(Ticket.DoesNotExist):
        Ticket.objects.get_by_public_id("nope!")
    assert client.get("/tickets/", {"t": text}).json() == {"id": ticket.pk, "title": "t"}
    assert client.get("/tickets/", {"t": "x" * 50}).status_code == 404


@pytest.mark.parametrize(
    "alphabet, min_length, expected",
    [
        ("3tW1w25zYqhEjNUFO94euKmsHAyPTdpk80SoglDQ7BiMGaICLXZvVxbnRJf6rc", 8, []),
        (None, 8, []),
        ("ab", 8, ["django_snowid.E401"]),
        ("aab", 8, ["django_snowid.E401"]),
        ("abcé", 8, ["django_snowid.E401"]),
        (123, 8, ["django_snowid.E401"]),
        ("abcdef", 300, ["django_snowid.E401"]),
        ("abcdef", "8", ["django_snowid.E401"]),
        (DEFAULT_ALPHABET, 8, ["django_snowid.W400"]),
    ],
)
def test_alphabet_check(alphabet, min_length, expected):
    with override_settings(
        SNOWID_PUBLIC_ID_ALPHABET=alphabet, SNOWID_PUBLIC_ID_MIN_LENGTH=min_length
    ):
        assert [m.id for m in check_public_ids()] == expected


def test_alphabet_without_sqids_installed_is_e402(monkeypatch):
    # None in sys.modules makes the import fail, as on a machine without the extra.
    monkeypatch.setitem(sys.modules, "sqids", None)
    assert [m.id for m in check_public_ids()] == ["django_snowid.E402"]


def test_every_alphabet_the_docs_show_is_warned_about():
    """Copied from the docs, an alphabet is as public as sqids' default."""
    import re

    texts = [p.read_text() for p in [*(ROOT / "docs").rglob("*.rst"), ROOT / "README.md"]]
    shown = {
        alphabet
        for text in texts
        for alphabet in re.findall(r'SNOWID_PUBLIC_ID_ALPHABET = "(\w+)"', text)
    }
    assert shown
    for alphabet in shown:
        with override_settings(SNOWID_PUBLIC_ID_ALPHABET=alphabet):
            (message,) = check_public_ids()
        assert message.id == "django_snowid.W400"
        assert "new_alphabet()" in message.msg


def test_new_alphabet_shuffles_sqids_letters_afresh_and_passes_the_checks():
    from django_snowid.ids.publicids import new_alphabet

    made = {new_alphabet() for _ in range(5)}
    assert len(made) == 5  # 62! orders: a repeat would mean no shuffle
    for alphabet in made:
        assert sorted(alphabet) == sorted(DEFAULT_ALPHABET)
        with override_settings(SNOWID_PUBLIC_ID_ALPHABET=alphabet):
            assert check_public_ids() == []


def test_the_one_liner_of_the_docs_prints_a_new_alphabet_outside_a_project(tmp_path):
    """``python -c`` before any settings exist, as the docs show it."""
    import re
    import shlex
    import subprocess

    (line,) = re.findall(
        r"^\s*\$ (python -c .*new_alphabet.*)$", (ROOT / "docs/drf.rst").read_text(), re.M
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, *shlex.split(line)[1:]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.strip()) == sorted(DEFAULT_ALPHABET)
