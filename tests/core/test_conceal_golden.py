"""Golden vectors of concealed numbers: numbers concealed by the first releases, with their
true positions. Every later version must decode them the same and make them again: a
change of the cipher, of the key's digest, of the tweak's encoding (version 1) or of a
description for people that re-keys numbers fails here."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from django_snowid.core.format_tweak import TWEAK_VERSION, tweak
from django_snowid.core.key_schedule import KeySchedule
from django_snowid.core.order_format import OrderNumberFormat

KEY = "golden-vector-key-of-concealed-numbers-0001"
NEW_KEY = "golden-vector-key-of-concealed-numbers-0002"
SCHEDULES: dict[str, Any] = {
    "one": KEY,
    "rotated": [("2031-01-01T00:00:00Z", KEY), ("2031-06-01T12:00:00Z", NEW_KEY)],
}
FORMATS: dict[str, dict[str, Any]] = {
    "binary-14": {"packing": "binary"},
    "binary-3": {"packing": "binary", "sequence_bits": 3, "shard_bits": 2},
    "binary-20": {"packing": "binary", "sequence_bits": 20, "shard_bits": 2},
    "decimal-5": {"packing": "decimal"},
    "decimal-1": {"packing": "decimal", "sequence_digits": 1, "shard_digits": 1},
    "decimal-7": {"packing": "decimal", "sequence_digits": 7, "shard_digits": 0},
    "decimal-4-luhn": {"packing": "decimal", "sequence_digits": 4, "check_digit": "luhn"},
    "decimal-3-damm-paris": {
        "packing": "decimal",
        "sequence_digits": 3,
        "check_digit": "damm",
        "zone": "Europe/Paris",
    },
    "binary-14-new-york": {"packing": "binary", "zone": "America/New_York"},
}
A, B, C, D = (
    "2031-03-04T05:06:07+00:00",
    "2031-06-01T11:59:59+00:00",  # the last second of the first key
    "2031-06-01T12:00:00+00:00",  # the first of the second
    "2032-12-31T23:59:59+00:00",
)
# (format, schedule): (instant, true sequence, shard, the number concealed by version 1)
VECTORS: dict[tuple[str, str], list[tuple[str, int, int, int]]] = {
    ("binary-14", "one"): [
        (A, 1, 0, 81344345042540544),
        (B, 16383, 15, 81422218942132367),
        (C, 2, 8, 81422220001433080),
        (D, 5461, 1, 84208841119327649),
    ],
    ("binary-14", "rotated"): [
        (A, 1, 0, 81344345042540544),
        (B, 16383, 15, 81422218942132367),
        (C, 2, 8, 81422220001428616),
        (D, 5461, 1, 84208841119291313),
    ],
    ("binary-3", "one"): [
        (A, 1, 0, 9929729619436),
        (B, 7, 3, 9939235710719),
        (C, 2, 2, 9939235840022),
        (D, 2, 1, 10279399550697),
    ],
    ("binary-3", "rotated"): [
        (A, 1, 0, 9929729619436),
        (B, 7, 3, 9939235710719),
        (C, 2, 2, 9939235840030),
        (D, 2, 1, 10279399550701),
    ],
    ("binary-20", "one"): [
        (A, 1, 0, 1301509520677958056),
        (B, 1048575, 3, 1302755503071339287),
        (C, 2, 2, 1302755520024524314),
        (D, 349525, 1, 1347341457910857397),
    ],
    ("binary-20", "rotated"): [
        (A, 1, 0, 1301509520677958056),
        (B, 1048575, 3, 1302755503071339287),
        (C, 2, 2, 1302755520024323326),
        (D, 349525, 1, 1347341457908432545),
    ],
    ("decimal-5", "one"): [
        (A, 1, 0, 3103040506078584500),
        (B, 99999, 99, 3106011159595101699),
        (C, 2, 50, 3106011200003488550),
        (D, 33333, 1, 3212312359593024701),
    ],
    ("decimal-5", "rotated"): [
        (A, 1, 0, 3103040506078584500),
        (B, 99999, 99, 3106011159595101699),
        (C, 2, 50, 3106011200009698250),
        (D, 33333, 1, 3212312359593116701),
    ],
    ("decimal-1", "one"): [
        (A, 1, 0, 31030405060770),
        (B, 9, 9, 31060111595919),
        (C, 2, 5, 31060112000065),
        (D, 3, 1, 32123123595991),
    ],
    ("decimal-1", "rotated"): [
        (A, 1, 0, 31030405060770),
        (B, 9, 9, 31060111595919),
        (C, 2, 5, 31060112000045),
        (D, 3, 1, 32123123595981),
    ],
    ("decimal-7", "one"): [
        (A, 1, 0, 3103040506077181078),
        (B, 9999999, 0, 3106011159597953250),
        (C, 2, 0, 3106011200009931739),
        (D, 3333333, 0, 3212312359590896198),
    ],
    ("decimal-7", "rotated"): [
        (A, 1, 0, 3103040506077181078),
        (B, 9999999, 0, 3106011159597953250),
        (C, 2, 0, 3106011200005927490),
        (D, 3333333, 0, 3212312359599424197),
    ],
    ("decimal-4-luhn", "one"): [
        (A, 1, 0, 3103040506071803008),
        (B, 9999, 99, 3106011159596314990),
        (C, 2, 50, 3106011200004460502),
        (D, 3333, 1, 3212312359594281017),
    ],
    ("decimal-4-luhn", "rotated"): [
        (A, 1, 0, 3103040506071803008),
        (B, 9999, 99, 3106011159596314990),
        (C, 2, 50, 3106011200008381506),
        (D, 3333, 1, 3212312359599786010),
    ],
    ("decimal-3-damm-paris", "one"): [
        (A, 1, 0, 310304060607589005),
        (B, 999, 99, 310601135959577994),
        (C, 2, 50, 310601140000347500),
        (D, 333, 1, 330101005959080013),
    ],
    ("decimal-3-damm-paris", "rotated"): [
        (A, 1, 0, 310304060607589005),
        (B, 999, 99, 310601135959577994),
        (C, 2, 50, 310601140000576503),
        (D, 333, 1, 330101005959041015),
    ],
    ("binary-14-new-york", "one"): [
        (A, 1, 0, 81344331935324288),
        (B, 16383, 15, 81422208456212143),
        (C, 2, 8, 81422209515764344),
        (D, 5461, 1, 84208828012284081),
    ],
    ("binary-14-new-york", "rotated"): [
        (A, 1, 0, 81344331935324288),
        (B, 16383, 15, 81422208456212143),
        (C, 2, 8, 81422209515672024),
        (D, 5461, 1, 84208828012116785),
    ],
}
# A key given as bytes, shard 3 at instant A, sequences 1, 2, 3 and 1000.
BYTES_KEY = bytes(range(7, 47))
BYTES_VECTORS = {
    "binary": [81344345042566291, 81344345042395699, 81344345042403907, 81344345042520931],
    "decimal": [3103040506072496803, 3103040506072679903, 3103040506078177403, 3103040506071123503],
}


def concealed(options: dict[str, Any], key: Any) -> OrderNumberFormat:
    return OrderNumberFormat(conceal=True, keys=KeySchedule.parse(key), **options)


@pytest.mark.parametrize(("name", "schedule"), list(VECTORS), ids="/".join)
def test_numbers_concealed_by_the_first_version_decode_and_are_made_the_same(name, schedule):
    fmt = concealed(FORMATS[name], SCHEDULES[schedule])
    for instant, sequence, shard, number in VECTORS[name, schedule]:
        second = fmt.local_second(datetime.fromisoformat(instant))
        decoded = fmt.decode(number)
        assert (decoded.time.isoformat(), decoded.sequence, decoded.shard) == (
            instant,
            sequence,
            shard,
        )
        assert fmt.position(number) == (second, sequence)
        assert fmt.compose(second, sequence, shard) == number


@pytest.mark.parametrize("packing", list(BYTES_VECTORS))
def test_a_key_given_as_bytes_conceals_as_it_did(packing):
    fmt = concealed({"packing": packing}, BYTES_KEY)
    second = fmt.local_second(datetime.fromisoformat(A))
    assert [fmt.compose(second, q, 3) for q in (1, 2, 3, 1000)] == BYTES_VECTORS[packing]


def test_the_tweak_is_a_fixed_encoding_not_the_description(monkeypatch):
    """Version 1's bytes, literally; and a new wording of ``describe()`` changes no number."""
    fmt = concealed(FORMATS["decimal-4-luhn"], KEY)
    assert TWEAK_VERSION == 1
    assert fmt.tweak() == (
        b"decimal: yyMMddHHmmss (UTC) + 4 concealed sequence digits + 2 shard digits"
        b" + luhn check digit"
    )
    assert concealed(FORMATS["binary-3"], KEY).tweak(1) == (
        b"binary: yyMMddHHmmss (UTC) << 5 | concealed sequence 3 bits | shard 2 bits"
    )
    with pytest.raises(ValueError, match="unknown tweak encoding version 2"):
        tweak(
            packing="binary",
            sequence_bits=14,
            shard_bits=4,
            sequence_digits=5,
            shard_digits=2,
            zone="UTC",
            check_digit=None,
            version=2,
        )
    monkeypatch.setattr(OrderNumberFormat, "describe", lambda self: "order numbers, reworded")
    reworded = concealed(FORMATS["decimal-4-luhn"], KEY)
    instant, sequence, shard, number = VECTORS["decimal-4-luhn", "one"][0]
    second = reworded.local_second(datetime.fromisoformat(instant))
    assert reworded.compose(second, sequence, shard) == number
