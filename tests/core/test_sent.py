"""What a client sent for one of our integers: digits, or a number JavaScript holds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from django_snowid.core.digits import parse_digits
from django_snowid.core.sent import (
    MAX_BIGINT,
    MAX_SAFE_INTEGER,
    ORDER_NUMBER,
    SEQUENCE_VALUE,
    SNOWFLAKE_ID,
    parse_sent,
    sent_refusal,
)
from django_snowid.exceptions import InvalidId, InvalidSentValue


@pytest.mark.parametrize(
    "data, code",
    [
        (1.5, "float"),
        (2.0**60, "float"),
        (True, "invalid"),
        (None, "invalid"),
        ([1], "invalid"),
        ({"id": 1}, "invalid"),
        (MAX_SAFE_INTEGER + 1, "unsafe_number"),
        (MAX_SAFE_INTEGER, None),
        (-5, None),  # a range for the caller to judge
        ("anything", None),  # a string for the parser of digits
    ],
)
def test_refusal_codes(data, code):
    assert sent_refusal(data) == code


def test_unsafe_numbers_can_be_allowed():
    assert sent_refusal(2**60, allow_unsafe=True) is None
    assert parse_sent(2**60, SNOWFLAKE_ID, allow_unsafe=True) == 2**60


@pytest.mark.parametrize(
    "data, code, message",
    [
        ("abc", "invalid", "'abc' is not an id: only the digits 0-9"),
        ("7" * 30, "too_long", "30 digits, at most 19"),
        (str(MAX_BIGINT + 1), "out_of_range", "an id is an integer from 0 to 2**63 - 1"),
        (-1, "out_of_range", "-1 is out of range"),
        (2**53, "unsafe_number", "Send ids as strings"),
        (0.5, "float", "ids are integers"),
    ],
)
def test_refusals_carry_a_code_and_the_message(data, code, message):
    with pytest.raises(InvalidSentValue) as caught:
        parse_sent(data, SNOWFLAKE_ID)
    assert caught.value.code == code
    assert message in str(caught.value)
    assert isinstance(caught.value, InvalidId)  # callers catching InvalidId catch it too


def test_each_kind_names_itself():
    for kind, name in [(ORDER_NUMBER, "an order number"), (SEQUENCE_VALUE, "a sequence value")]:
        with pytest.raises(InvalidSentValue, match=f"is not {name}"):
            parse_sent("x", kind)
        assert all("{value}" in text for text in kind.messages.values())


@given(st.one_of(st.integers(0, MAX_SAFE_INTEGER), st.integers(0, MAX_BIGINT).map(str)))
def test_what_javascript_keeps_and_every_string_of_digits_come_back_exact(data):
    assert parse_sent(data, SNOWFLAKE_ID) == int(data)


@given(st.text(max_size=25))
def test_strings_are_judged_by_the_one_parser_of_typed_numbers(text):
    try:
        expected: int | None = parse_digits(text)
    except InvalidId:
        expected = None
    try:
        got: int | None = parse_sent(text, SNOWFLAKE_ID)
    except InvalidSentValue as exc:
        assert exc.code in ("invalid", "too_long", "out_of_range")
        got = None
    assert got == (expected if expected is not None and expected <= MAX_BIGINT else None)
