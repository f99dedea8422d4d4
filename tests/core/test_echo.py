"""The commands' plain tables and the shortened echo of a person's input."""

from __future__ import annotations

from django_snowid.core.echo import shown, table


def test_columns_line_up_without_trailing_spaces():
    lines = table(
        [("field", "before", ""), ("shop.Order.number", 7, "unchanged"), ("a.B.c", 12, "")]
    )
    assert lines == [
        "field              before",
        "shop.Order.number  7       unchanged",
        "a.B.c              12",
    ]


def test_no_rows_no_lines():
    assert table([]) == []


def test_a_long_input_is_shortened_with_its_length():
    assert shown("x" * 10_000) == "'xxxxxxxxxxxxxxxxxxxx'... (10,000 characters)"
    assert shown("short") == "'short'"
