"""What both GraphQL integrations are tried with: values refused as input, and why."""

from __future__ import annotations

#: A value a client sends for an id, and a part of the message that refuses it.
BAD_IDS = [
    ("abc", "is not an id: only the digits 0-9"),
    (" 42", "only the digits 0-9"),
    ("-1", "only the digits 0-9"),
    ("7" * 5000, "5,000 digits, at most 19"),
    (str(2**63), "is out of range: an id is an integer from 0 to 2**63 - 1"),
    (-1, "is out of range"),
    (2**53, "already changed its last digits. Send ids as strings"),
    (2**60, "already changed its last digits"),
    (1.5, "ids are integers; send them as strings"),
    (True, "send the id as a string of digits"),
]
