"""Order-number formats: ``yyMMddHHmmss`` + a per-second sequence + the user's shard, packed
in binary or decimal. Stores keep a "local second" (seconds since 1970 on the zone's wall
clock): comparing (local second, sequence) pairs compares numbers."""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cached_property
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..exceptions import CheckDigitMismatch, InvalidId, LayoutError
from .check_digits import CHECK_DIGITS
from .conceal import SequenceCipher
from .digits import parse_digits
from .format_tweak import TWEAK_VERSION, tweak
from .key_schedule import KeySchedule
from .layout import iso_utc
from .order_keys import KeyWindow, key_window

__all__ = ["DecodedOrderNumber", "OrderNumberFormat", "zone_has_dst"]

Packing = Literal["binary", "decimal"]
MAX_INT64 = 2**63 - 1
STEM_BITS = 40  # 991231235959 < 2**40
STEM_DIGITS = 12
#: The configured widths must hold numbers until the end of this year (a system check).
MUST_FIT_UNTIL_YEAR = 2090
_UTC = timezone.utc
_LOCAL_EPOCH = datetime(1970, 1, 1)


def zone_has_dst(zone: str) -> bool:
    """Whether ``zone``'s UTC offset changes over a year (and so its wall clock repeats)."""
    info = ZoneInfo(zone)
    year = datetime.now(_UTC).year
    offsets = {
        datetime(year, month, 15, tzinfo=_UTC).astimezone(info).utcoffset()
        for month in range(1, 13)
    }
    return len(offsets) > 1


@dataclass(frozen=True)
class DecodedOrderNumber:
    value: int
    stem: int
    local_time: datetime  # aware, in the format's zone
    sequence: int
    shard: int
    format: OrderNumberFormat
    #: The sequence the number shows, when its format conceals the true one (``sequence``).
    visible_sequence: int | None = None

    @property
    def time(self) -> datetime:
        """The second the number was issued, as an aware UTC datetime."""
        return self.local_time.astimezone(_UTC)

    def as_dict(self) -> dict[str, Any]:
        return {
            "number": str(self.value),
            "kind": "order-number",
            "packing": self.format.packing,
            "stem": f"{self.stem:012d}",
            "time": iso_utc(self.time, milliseconds=False),
            "local_time": self.local_time.isoformat(),
            "sequence": self.sequence,
            "shard": self.shard,
            **(
                {} if self.visible_sequence is None else {"visible_sequence": self.visible_sequence}
            ),
            **({"check_digit": self.format.check_digit} if self.format.check_digit else {}),
        }


@dataclass(frozen=True)
class OrderNumberFormat:
    packing: Packing = "binary"
    sequence_bits: int = 14
    shard_bits: int = 4
    sequence_digits: int = 5
    shard_digits: int = 2
    zone: str = "UTC"
    #: Show a keyed permutation of each second's sequences (``keys`` says which key).
    conceal: bool = False
    #: A check digit appended to decimal numbers: ``"luhn"``, ``"damm"`` or ``None``.
    check_digit: str | None = None
    keys: KeySchedule | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._check_choices()
        self._check_widths()
        try:
            ZoneInfo(self.zone)
        except (ZoneInfoNotFoundError, ValueError, TypeError):
            raise LayoutError(f"Unknown time zone {self.zone!r}.") from None
        if self.packing == "binary":
            self._check_binary_fits()
        else:
            self._check_decimal_fits()

    def __copy__(self) -> OrderNumberFormat:
        return self  # immutable (DRF deep-copies a serializer field's arguments)

    def __deepcopy__(self, memo: dict[int, Any]) -> OrderNumberFormat:
        return self

    def _check_choices(self) -> None:
        if self.packing not in ("binary", "decimal"):
            raise LayoutError(f"packing must be 'binary' or 'decimal', not {self.packing!r}.")
        if not isinstance(self.conceal, bool):
            raise LayoutError(f"conceal must be True or False, not {self.conceal!r}.")
        if self.conceal and self.keys is None:
            raise LayoutError(
                "A concealed sequence needs a key: set SNOWID_ORDER_KEY (at least 32 characters)."
            )
        if self.check_digit is None:
            return
        if self.check_digit not in CHECK_DIGITS:
            raise LayoutError(
                f"check_digit must be one of {sorted(CHECK_DIGITS)} or None, not "
                f"{self.check_digit!r}."
            )
        if self.packing != "decimal":
            raise LayoutError(
                "A check digit is appended to decimal numbers: use packing='decimal'."
            )

    def _check_widths(self) -> None:
        for name in ("sequence_bits", "shard_bits", "sequence_digits", "shard_digits"):
            value = getattr(self, name)
            lowest = 1 if name.startswith("sequence") else 0
            if not isinstance(value, int) or isinstance(value, bool) or value < lowest:
                raise LayoutError(f"{name} must be an integer >= {lowest}, not {value!r}.")

    def _check_binary_fits(self) -> None:
        bits = STEM_BITS + self.sequence_bits + self.shard_bits
        if bits > 63:
            raise LayoutError(
                f"A binary order number needs {STEM_BITS} stem bits + {self.sequence_bits} "
                f"sequence bits + {self.shard_bits} shard bits = {bits} bits; at most 63 fit."
            )

    def _check_decimal_fits(self) -> None:
        check = 1 if self.check_digit else 0
        digits = STEM_DIGITS + self.sequence_digits + self.shard_digits + check
        if digits > 19:
            raise LayoutError(self._too_many_digits(digits, check))
        last_stem = (MUST_FIT_UNTIL_YEAR % 100) * 10**10 + 1231235959
        largest = self._pack(last_stem, self.max_sequence, self.shard_count - 1)
        largest = largest * 10 + 9 if check else largest
        if largest > MAX_INT64:
            with_check = " and a check digit" if check else ""
            raise LayoutError(
                f"A decimal order number with {self.sequence_digits} sequence digits, "
                f"{self.shard_digits} shard digits{with_check} overflows a signed 64-bit "
                f"integer before the end of {MUST_FIT_UNTIL_YEAR} ({largest} > {MAX_INT64})."
            )

    def _too_many_digits(self, digits: int, check: int) -> str:
        plus = " + 1 check digit" if check else ""
        over = digits - 19
        ways = [
            f"{name}={value - over}"
            for name, value, lowest in (
                ("sequence_digits", self.sequence_digits, 1),
                ("shard_digits", self.shard_digits, 0),
            )
            if value - over >= lowest
        ]
        fix = (
            f": give up {over} digit{'s' if over > 1 else ''}, {' or '.join(ways)}" if ways else ""
        )
        return (
            f"A decimal order number of {STEM_DIGITS} + {self.sequence_digits} + "
            f"{self.shard_digits}{plus} = {digits} digits does not fit 19 digits{fix}."
        )

    @cached_property  # on the hot path of every number; the format never changes
    def max_sequence(self) -> int:
        """The per-second cap: sequences run from 1 to this."""
        if self.packing == "binary":
            return (1 << self.sequence_bits) - 1
        return 10**self.sequence_digits - 1

    @cached_property  # on the hot path of every number; the format never changes
    def shard_count(self) -> int:
        return 1 << self.shard_bits if self.packing == "binary" else 10**self.shard_digits

    @cached_property  # on the hot path of every number; the format never changes
    def _seq_factor(self) -> int:
        return 1 << self.shard_bits if self.packing == "binary" else 10**self.shard_digits

    @cached_property  # on the hot path of every number; the format never changes
    def _stem_factor(self) -> int:
        if self.packing == "binary":
            return 1 << (self.sequence_bits + self.shard_bits)
        return 10 ** (self.sequence_digits + self.shard_digits)

    @property
    def tzinfo(self) -> ZoneInfo:
        return ZoneInfo(self.zone)

    def describe(self) -> str:
        concealed = "concealed " if self.conceal else ""
        if self.packing == "binary":
            return (
                f"binary: yyMMddHHmmss ({self.zone}) << {self.sequence_bits + self.shard_bits} | "
                f"{concealed}sequence {self.sequence_bits} bits | shard {self.shard_bits} bits"
            )
        check = f" + {self.check_digit} check digit" if self.check_digit else ""
        return (
            f"decimal: yyMMddHHmmss ({self.zone}) + {self.sequence_digits} {concealed}sequence "
            f"digits + {self.shard_digits} shard digits{check}"
        )

    @cached_property
    def cipher(self) -> SequenceCipher | None:
        """The permutation of each second's sequences, when the format conceals them."""
        if not self.conceal or self.keys is None:
            return None
        binary = self.packing == "binary"
        return SequenceCipher(
            self.keys,
            radix=2 if binary else 10,
            width=self.sequence_bits if binary else self.sequence_digits,
            tweak=self.tweak(),
            unix_of=self._unix_of_local_second,
        )

    def tweak(self, version: int = TWEAK_VERSION) -> bytes:
        """What keys this format's cipher besides the key (``format_tweak``, ``version``)."""
        return tweak(
            packing=self.packing,
            sequence_bits=self.sequence_bits,
            shard_bits=self.shard_bits,
            sequence_digits=self.sequence_digits,
            shard_digits=self.shard_digits,
            zone=self.zone,
            check_digit=self.check_digit,
            version=version,
        )

    def key_window(self, local_second: int) -> KeyWindow | None:
        """The key window of ``local_second`` (``None``: a format that conceals nothing)."""
        if self.cipher is None or self.keys is None:
            return None
        return key_window(self.keys, local_second, self._unix_of_local_second)

    def _unix_of_local_second(self, local_second: int) -> int:
        if self.zone == "UTC":
            return local_second
        return int(self.time_of_local_second(local_second).timestamp())

    def shown_sequence(self, local_second: int, sequence: int) -> int:
        """The sequence a number of ``local_second`` shows for its true ``sequence``."""
        cipher = self.cipher
        return sequence if cipher is None else cipher.conceal(local_second, sequence)

    def true_sequence(self, local_second: int, shown: int) -> int:
        """The true sequence of a number of ``local_second`` that shows ``shown``."""
        cipher = self.cipher
        return shown if cipher is None else cipher.reveal(local_second, shown)

    def with_check_digit(self, body: int) -> int:
        """``body`` with the format's check digit appended (``body`` without one)."""
        scheme = self.check_digit
        return body if scheme is None else body * 10 + CHECK_DIGITS[scheme](body)

    def bounds_of_second(self, local_second: int) -> tuple[int, int]:
        """The smallest and the largest value any number of ``local_second`` can have."""
        low = self.stem_of_local_second(local_second) * self._stem_factor
        high = low + self._stem_factor - 1
        return (low * 10, high * 10 + 9) if self.check_digit else (low, high)

    def local_second(self, moment: datetime) -> int:
        """Seconds since 1970-01-01 00:00 on the format's wall clock."""
        if moment.tzinfo is None:
            raise LayoutError(f"{moment.isoformat()} is naive; give an aware datetime.")
        wall = moment.astimezone(self.tzinfo).replace(tzinfo=None)
        return (wall - _LOCAL_EPOCH) // timedelta(seconds=1)

    def utc_offset_at(self, unix_second: float) -> int:
        """The zone's UTC offset in seconds at ``unix_second``."""
        offset = datetime.fromtimestamp(unix_second, self.tzinfo).utcoffset()
        return int(offset.total_seconds()) if offset is not None else 0

    def time_of_local_second(self, local_second: int) -> datetime:
        """The aware UTC instant a local second (as stores keep it) stands for."""
        wall = _LOCAL_EPOCH + timedelta(seconds=local_second)
        return wall.replace(tzinfo=self.tzinfo).astimezone(_UTC)

    @staticmethod
    def stem_of_local_second(local_second: int) -> int:
        wall = _LOCAL_EPOCH + timedelta(seconds=local_second)
        return (
            (wall.year % 100) * 10**10
            + wall.month * 10**8
            + wall.day * 10**6
            + wall.hour * 10**4
            + wall.minute * 100
            + wall.second
        )

    def shard_of_user(self, uid: int) -> int:
        """The shard value a user id puts in the low bits (digits) of its numbers."""
        return uid % self.shard_count

    def _pack(self, stem: int, sequence: int, shard: int) -> int:
        return stem * self._stem_factor + sequence * self._seq_factor + shard

    def compose(self, local_second: int, sequence: int, shard: int = 0) -> int:
        if not 1 <= sequence <= self.max_sequence:
            raise LayoutError(f"Sequence {sequence} is out of range 1..{self.max_sequence}.")
        if not 0 <= shard < self.shard_count:
            raise LayoutError(f"Shard {shard} is out of range 0..{self.shard_count - 1}.")
        stem = self.stem_of_local_second(local_second)
        body = self._pack(stem, self.shown_sequence(local_second, sequence), shard)
        return self.with_check_digit(body)

    @staticmethod
    def _check_range(value: int) -> int:
        if not 0 < value <= MAX_INT64:
            raise InvalidId(f"{value} is out of range: order numbers are 1..{MAX_INT64}.")
        return value

    def check_number(self, value: object) -> int:
        if isinstance(value, str):
            value = parse_digits(value, what="an order number")
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidId(f"{value!r} is not an order number: expected an integer.")
        value = self._check_range(value)
        scheme = self.check_digit
        if scheme is not None:
            body, digit = divmod(value, 10)
            if CHECK_DIGITS[scheme](body) != digit:
                raise CheckDigitMismatch(
                    f"{value} fails its check digit ({scheme}): a digit was mistyped or two "
                    "were swapped. Compare it with the number as written."
                )
        return value

    def split(self, number: int) -> tuple[int, int, int]:
        """(stem, sequence as shown, shard) of ``number``, its check digit verified."""
        number = self.check_number(number)
        return self._split_body(number // 10 if self.check_digit else number)

    def _split_body(self, body: int) -> tuple[int, int, int]:
        stem, rest = divmod(body, self._stem_factor)
        sequence, shard = divmod(rest, self._seq_factor)
        return stem, sequence, shard

    def local_second_of_stem(self, stem: int) -> int:
        """Inverse of :meth:`stem_of_local_second` (years 2000-2099)."""
        wall = self._wall_of_stem(stem)
        return (wall - _LOCAL_EPOCH) // timedelta(seconds=1)

    def _wall_of_stem(self, stem: int) -> datetime:
        if not 0 <= stem < 10**STEM_DIGITS:
            # A stem of 13 digits would read as a year past 2099: no format writes one.
            raise InvalidId(
                f"Its stem {stem} has more than {STEM_DIGITS} digits (yyMMddHHmmss): "
                f"not an order number of this format ({self.describe()})."
            )
        yy, rest = divmod(stem, 10**10)
        mo, rest = divmod(rest, 10**8)
        dd, rest = divmod(rest, 10**6)
        hh, rest = divmod(rest, 10**4)
        mi, ss = divmod(rest, 100)
        try:
            return datetime(2000 + yy, mo, dd, hh, mi, ss)
        except ValueError:
            raise InvalidId(
                f"{stem:012d} is not a yyMMddHHmmss date-time: not an order number of this "
                f"format ({self.describe()})."
            ) from None

    def position_above(self, value: int) -> tuple[int, int] | None:
        """The position past which every number of this format is larger than ``value`` (of
        any format), ``None`` when every one is, :class:`InvalidId` when none is."""
        if value < 1:
            return None
        value = self._check_range(value)
        stem, sequence, _ = self._split_body(value // 10 if self.check_digit else value)
        if stem >= 991231235959 and (stem > 991231235959 or sequence >= self.max_sequence):
            raise InvalidId(
                f"{value} is larger than every number of this format ({self.describe()})."
            )
        wall = _floor_wall(stem)
        if wall is None:
            return None
        second = (wall - _LOCAL_EPOCH) // timedelta(seconds=1)
        if self.stem_of_local_second(second) != stem or self.conceal:
            return second, self.max_sequence
        return second, min(sequence, self.max_sequence)

    def decode(self, number: int | str) -> DecodedOrderNumber:
        value = self.check_number(number)
        stem, sequence, shard = self.split(value)
        wall = self._wall_of_stem(stem)
        if not 1 <= sequence <= self.max_sequence:
            raise InvalidId(f"{value} has sequence {sequence}: not an order number of this format.")
        shown: int | None = None
        if self.cipher is not None:
            shown = sequence
            sequence = self.true_sequence(self.local_second_of_stem(stem), shown)
        return DecodedOrderNumber(
            value=value,
            stem=stem,
            local_time=wall.replace(tzinfo=self.tzinfo),
            sequence=sequence,
            shard=shard,
            format=self,
            visible_sequence=shown,
        )

    def position(self, number: int) -> tuple[int, int]:
        """(local second, true sequence): what a store compares to keep numbers increasing."""
        stem, sequence, _ = self.split(number)
        second = self.local_second_of_stem(stem)
        return second, self.true_sequence(second, sequence) if self.conceal else sequence


def _floor_wall(stem: int) -> datetime | None:
    """The latest yyMMddHHmmss date-time whose stem is at most ``stem`` (None: before 2000)."""
    yy, rest = divmod(stem, 10**10)
    mo, rest = divmod(rest, 10**8)
    dd, rest = divmod(rest, 10**6)
    hh, rest = divmod(rest, 10**4)
    mi, ss = divmod(rest, 100)
    if mo > 12:
        mo, dd, hh, mi, ss = 12, 31, 23, 59, 59
    elif mo == 0 or (mo == 1 and dd == 0):  # the end of the year before
        if yy == 0:
            return None
        yy, mo, dd, hh, mi, ss = yy - 1, 12, 31, 23, 59, 59
    elif dd == 0:  # the end of the month before
        mo, dd, hh, mi, ss = mo - 1, calendar.monthrange(2000 + yy, mo - 1)[1], 23, 59, 59
    last = calendar.monthrange(2000 + yy, mo)[1]
    if dd > last:
        dd, hh, mi, ss = last, 23, 59, 59
    if hh > 23:
        hh, mi, ss = 23, 59, 59
    if mi > 59:
        mi, ss = 59, 59
    return datetime(2000 + yy, mo, dd, hh, mi, min(ss, 59))
