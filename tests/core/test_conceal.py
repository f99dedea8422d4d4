"""Concealed sequences and check digits in the pure core: bijection, spread, keys,
rotation, and the errors every check digit catches."""

from __future__ import annotations

import math
import random

import pytest

from django_snowid.core.check_digits import damm_digit, has_valid_check_digit, luhn_digit
from django_snowid.core.key_schedule import KeySchedule
from django_snowid.core.order_format import OrderNumberFormat
from django_snowid.exceptions import InvalidId, LayoutError

KEY = "k" * 16 + "0123456789abcdef"  # 32 characters
OTHER_KEY = "z" * 32
SECOND = 1_900_000_000  # a local second in 2030

FORMATS = {
    "binary-14": {"packing": "binary"},
    "binary-3": {"packing": "binary", "sequence_bits": 3},
    "binary-7": {"packing": "binary", "sequence_bits": 7, "shard_bits": 2},
    "decimal-5": {"packing": "decimal"},
    "decimal-1": {"packing": "decimal", "sequence_digits": 1},
    "decimal-3-damm": {"packing": "decimal", "sequence_digits": 3, "check_digit": "damm"},
    "decimal-4-luhn": {"packing": "decimal", "sequence_digits": 4, "check_digit": "luhn"},
}


def concealed(key: object = KEY, **options: object) -> OrderNumberFormat:
    return OrderNumberFormat(conceal=True, keys=KeySchedule.parse(key), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("options", FORMATS.values(), ids=FORMATS.keys())
def test_every_second_is_a_bijection_that_keeps_stem_and_shard(options):
    fmt, plain = concealed(**options), OrderNumberFormat(**options)  # type: ignore[arg-type]
    cap = min(fmt.max_sequence, 3000)
    shard = fmt.shard_count - 1
    for second in (SECOND, SECOND + 1, SECOND + 86_400 * 40, SECOND + 7):
        numbers = [fmt.compose(second, q, shard) for q in range(1, cap + 1)]
        assert len(set(numbers)) == cap
        for q, number in zip(range(1, cap + 1), numbers, strict=True):
            decoded = fmt.decode(number)
            assert (decoded.sequence, decoded.shard) == (q, shard)
            assert fmt.position(number) == (second, q)
            assert 1 <= decoded.visible_sequence <= fmt.max_sequence
            assert decoded.stem == plain.decode(plain.compose(second, q, shard)).stem
            assert fmt.bounds_of_second(second)[0] <= number <= fmt.bounds_of_second(second)[1]
        if fmt.max_sequence == cap:  # the whole domain: every visible sequence is used
            assert {fmt.split(n)[1] for n in numbers} == set(range(1, cap + 1))
        # Numbers still sort by second: every number of this second is below the next's.
        assert max(numbers) < fmt.compose(second + 1, 1, 0)


def test_the_same_position_looks_different_in_two_seconds():
    fmt = concealed()
    shown = {fmt.split(fmt.compose(SECOND + s, 1, 0))[1] for s in range(50)}
    assert len(shown) > 40


def _spearman(xs: list[int], ys: list[int]) -> float:
    def ranks(values: list[int]) -> list[int]:
        order = sorted(range(len(values)), key=values.__getitem__)
        result = [0] * len(values)
        for rank, index in enumerate(order):
            result[index] = rank
        return result

    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    d2 = sum((a - b) ** 2 for a, b in zip(rx, ry, strict=True))
    return 1 - 6 * d2 / (n * (n * n - 1))


@pytest.mark.parametrize("options", [FORMATS["binary-14"], FORMATS["decimal-5"]], ids=str)
def test_visible_sequences_of_busy_seconds_say_nothing_of_the_true_positions(options):
    """Spearman's rank correlation between the true positions 1..n of a busy second and
    the sequences its numbers show: under independence it is about normal with standard
    deviation 1/sqrt(n-1); |rho| must stay under 4 of them (a 1-in-15,000 false alarm)
    in each of 20 seconds. And the shown sequences fill the whole range, however few the
    second had: a Kolmogorov-Smirnov distance to the uniform law under 1.63/sqrt(m)
    (alpha = 1%) over the first 5 numbers of 400 seconds."""
    fmt = concealed(**options)  # type: ignore[arg-type]
    n = 2000
    for second in range(SECOND, SECOND + 20):
        shown = [fmt.split(fmt.compose(second, q, 0))[1] for q in range(1, n + 1)]
        rho = _spearman(list(range(1, n + 1)), shown)
        assert abs(rho) < 4 / math.sqrt(n - 1), (second, rho)
    # A quiet second (5 orders) shows sequences spread over the whole range.
    fractions = sorted(
        fmt.split(fmt.compose(second, q, 0))[1] / fmt.max_sequence
        for second in range(SECOND, SECOND + 400)
        for q in range(1, 6)
    )
    m = len(fractions)
    distance = max(max((i + 1) / m - f, f - i / m) for i, f in enumerate(fractions))
    assert distance < 1.63 / math.sqrt(m)
    # Plain numbers fail both: their sequences are the positions.
    plain = OrderNumberFormat(**options)  # type: ignore[arg-type]
    shown = [plain.split(plain.compose(SECOND, q, 0))[1] for q in range(1, n + 1)]
    assert _spearman(list(range(1, n + 1)), shown) == 1


def test_decoding_needs_the_key():
    number = concealed().compose(SECOND, 17, 3)
    assert concealed().decode(number).sequence == 17
    assert concealed(OTHER_KEY).decode(number).sequence != 17
    # Without conceal, the number shows its visible sequence only.
    assert (
        OrderNumberFormat().decode(number).sequence == concealed().decode(number).visible_sequence
    )


def test_a_key_schedule_keeps_older_numbers_readable():
    start = "2030-03-01T00:00:00Z"
    from datetime import datetime

    rotate_at = int(datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp())
    rotated = concealed([("2025-01-01T00:00:00", KEY), (start, OTHER_KEY)])
    old, new = concealed(KEY), concealed(OTHER_KEY)
    before, after = rotate_at - 1, rotate_at
    for q in (1, 2, 999):
        assert rotated.compose(before, q, 0) == old.compose(before, q, 0)
        assert rotated.compose(after, q, 0) == new.compose(after, q, 0)
        assert rotated.decode(old.compose(before, q, 0)).sequence == q
        assert rotated.decode(new.compose(after, q, 0)).sequence == q
    # Seconds before the first key's start use the first key.
    assert rotated.compose(10**9, 5, 0) == old.compose(10**9, 5, 0)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("short-secret-" + "x" * 5, "at least 32"),
        (b"\x00" * 31, "at least 32"),
        (12345, "expected a key"),
        ([], "empty"),
        ([("2030-01-01", KEY), ("2029-01-01", OTHER_KEY)], "not after"),
        ([("yesterday", KEY)], "not an ISO 8601"),
        ([("2030-01-01", "tiny-secret-value")], "at least 32"),
        ([KEY], "not a (valid_from, key) pair"),
    ],
)
def test_bad_keys_are_refused_without_showing_them(value, problem):
    with pytest.raises(
        LayoutError, match=r"(?s).*" + problem.replace("(", r"\(").replace(")", r"\)")
    ) as raised:
        KeySchedule.parse(value, name="SNOWID_ORDER_KEY")
    for secret in ("short-secret", "tiny-secret-value", KEY, OTHER_KEY):
        assert secret not in str(raised.value)


def test_keys_never_show():
    schedule = KeySchedule.parse([("2020-01-01", KEY), ("2030-01-01", OTHER_KEY)])
    fmt = concealed([("2020-01-01", KEY), ("2030-01-01", OTHER_KEY)])
    texts = [repr(schedule), str(schedule), repr(fmt), str(fmt), repr(fmt.cipher), fmt.describe()]
    texts.append(str(fmt.decode(fmt.compose(SECOND, 3, 1)).as_dict()))
    for text in texts:
        assert KEY not in text and OTHER_KEY not in text and "kkkk" not in text
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(schedule)


def test_conceal_without_a_key_is_a_layout_error():
    with pytest.raises(LayoutError, match="SNOWID_ORDER_KEY"):
        OrderNumberFormat(conceal=True)


# ------------------------------------------------------------------ check digits
def _single_digit_errors(text: str) -> list[str]:
    return [
        text[:i] + d + text[i + 1 :] for i in range(len(text)) for d in "0123456789" if d != text[i]
    ]


def _adjacent_transpositions(text: str) -> list[str]:
    return [
        text[:i] + text[i + 1] + text[i] + text[i + 2 :]
        for i in range(len(text) - 1)
        if text[i] != text[i + 1]
    ]


@pytest.mark.parametrize("scheme", ["luhn", "damm"])
def test_every_single_wrong_digit_is_caught(scheme):
    rng = random.Random(38)
    digit = {"luhn": luhn_digit, "damm": damm_digit}[scheme]
    for _ in range(300):
        body = rng.randrange(10**17, 10**18)
        text = f"{body}{digit(body)}"
        assert has_valid_check_digit(scheme, int(text))
        for wrong in _single_digit_errors(text):
            assert not has_valid_check_digit(scheme, int(wrong)), (text, wrong)


def test_damm_catches_every_adjacent_transposition_and_luhn_most():
    rng = random.Random(39)
    luhn_missed = 0
    for _ in range(300):
        body = rng.randrange(10**17, 10**18)
        for wrong in _adjacent_transpositions(f"{body}{damm_digit(body)}"):
            assert not has_valid_check_digit("damm", int(wrong))
        for wrong in _adjacent_transpositions(f"{body}{luhn_digit(body)}"):
            luhn_missed += has_valid_check_digit("luhn", int(wrong))
    assert luhn_missed > 0  # 09 <-> 90: why "damm" is offered


def test_known_check_digits():
    assert luhn_digit(7992739871) == 3  # the textbook example
    assert damm_digit(572) == 4


@pytest.mark.parametrize("scheme", ["luhn", "damm"])
def test_a_format_with_a_check_digit_refuses_a_mistyped_number(scheme):
    fmt = OrderNumberFormat(packing="decimal", sequence_digits=4, check_digit=scheme)
    number = fmt.compose(SECOND, 42, 7)
    assert fmt.decode(number).sequence == 42 and fmt.decode(str(number)).shard == 7
    text = str(number)
    wrong = text[:-3] + str((int(text[-3]) + 1) % 10) + text[-2:]
    with pytest.raises(InvalidId, match="fails its check digit"):
        fmt.decode(wrong)


def test_the_check_digit_costs_a_digit_of_the_column():
    with pytest.raises(LayoutError, match="1 check digit = 20 digits"):
        OrderNumberFormat(packing="decimal", check_digit="damm")  # 12 + 5 + 2 + 1
    with pytest.raises(LayoutError, match="decimal"):
        OrderNumberFormat(packing="binary", check_digit="luhn")
    with pytest.raises(LayoutError, match="check_digit must be"):
        OrderNumberFormat(packing="decimal", sequence_digits=4, check_digit="verhoeff")
    fmt = OrderNumberFormat(packing="decimal", sequence_digits=4, check_digit="luhn")
    assert len(str(fmt.compose(SECOND, 1, 0))) == 19


@pytest.mark.parametrize("options", FORMATS.values(), ids=FORMATS.keys())
def test_uniqueness_and_routing_over_many_seconds(options):
    """300 seconds (a day apart each, across month and year ends), 40 positions in each,
    every shard: no two numbers alike, each routes by its shard, each reads back."""
    fmt = concealed(**options)  # type: ignore[arg-type]
    seen: set[int] = set()
    for step in range(300):
        second = SECOND + step * 86_399
        for q in range(1, min(fmt.max_sequence, 40) + 1):
            shard = (q * 7 + step) % fmt.shard_count
            number = fmt.compose(second, q, shard)
            assert number not in seen
            seen.add(number)
            body = number // 10 if fmt.check_digit else number
            assert body % fmt.shard_count == shard
            assert fmt.position(number) == (second, q)


def test_a_floor_in_a_concealed_second_is_past_the_whole_second():
    fmt, plain = concealed(), OrderNumberFormat()
    number = fmt.compose(SECOND, 5, 0)
    assert plain.position_above(number)[0] == SECOND
    assert fmt.position_above(number) == (SECOND, fmt.max_sequence)
    damm = OrderNumberFormat(packing="decimal", sequence_digits=4, check_digit="damm")
    old = OrderNumberFormat(packing="decimal", sequence_digits=4, shard_digits=3)
    value = old.compose(SECOND, 9, 0)  # a number of another format, no check digit
    assert damm.position_above(value) == (SECOND, 9)
    assert damm.compose(SECOND, 10, 0) > value


@pytest.mark.parametrize("options", [FORMATS["decimal-3-damm"], FORMATS["binary-14"]], ids=str)
@pytest.mark.parametrize("above", [None, 0, 1, 641, 10**6])
def test_the_cipher_refuses_values_outside_its_domain(options, above):
    """1..radix**width - 1 is the whole domain: 0 or 1000 (3 digits) would be folded onto
    a sequence of the domain, shown as another number's."""
    fmt = concealed(**options)  # type: ignore[arg-type]
    cipher = fmt.cipher
    assert cipher is not None
    # None: 0; else that far above the largest sequence (1000 and more for 3 digits).
    value = 0 if above is None else fmt.max_sequence + 1 + above
    with pytest.raises(LayoutError, match=rf"{value} is out of range 1\.\.{fmt.max_sequence}"):
        cipher.conceal(SECOND, value)
    with pytest.raises(InvalidId, match=rf"{value} is out of range 1\.\.{fmt.max_sequence}"):
        cipher.reveal(SECOND, value)
    assert cipher.reveal(SECOND, cipher.conceal(SECOND, fmt.max_sequence)) == fmt.max_sequence
