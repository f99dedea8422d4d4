"""``OrderNumberField``: a readable, increasing, shard-routed number filled on insert."""

from __future__ import annotations

import weakref
from typing import Any

from django import forms
from django.core import checks
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import lookups

from ..conf import conf, on_settings_changed
from ..core.order_format import DecodedOrderNumber, OrderNumberFormat, zone_has_dst
from ..exceptions import InvalidId, LayoutError
from ..fieldbase import IssuedBigIntegerField
from ..inventory import ORDER
from .formats import build_format, checked_format
from .issuer import StreamIssuer, fields_of_stream, get_issuer
from .retry import install_insert_retry

E202 = "django_snowid.E202"
#: E202's hint for a decimal format: where the formats that fit 19 digits are listed.
DECIMAL_FORMATS_HINT = (
    'The decimal formats that fit, with and without a check digit: docs/orders.rst, "Check '
    'digits". '
)

__all__ = ["OrderNumberField"]


class OrderNumberField(IssuedBigIntegerField, models.BigIntegerField):
    """``yyMMddHHmmss`` + a per-second sequence + the low bits of a user id.

    ``shard_from`` names the attribute (e.g. ``"user_id"``) whose value's low bits (or
    digits) end the number, so that orders route to the same shard as their user.
    ``stream`` names the sequence (default ``"app_label.Model.field"``); fields that share
    a stream share its sequence. ``conceal=True`` shows a keyed permutation of each
    second's sequences (the key is ``SNOWID_ORDER_KEY``); ``check_digit`` (``"luhn"`` or
    ``"damm"``) appends a check digit to decimal numbers. Format options left at ``None``
    take the ``SNOWID_ORDER_*`` settings.
    """

    description = "Order number (yyMMddHHmmss + sequence + shard)"
    kind = ORDER
    public_module = "django_snowid.fields"

    def __init__(
        self,
        *args: Any,
        shard_from: str | None = None,
        stream: str | None = None,
        packing: str | None = None,
        sequence_bits: int | None = None,
        shard_bits: int | None = None,
        sequence_digits: int | None = None,
        shard_digits: int | None = None,
        zone: str | None = None,
        conceal: bool | None = None,
        check_digit: str | None = None,
        **kwargs: Any,
    ) -> None:
        self._stream = stream
        self.format_options = {
            "packing": packing,
            "sequence_bits": sequence_bits,
            "shard_bits": shard_bits,
            "sequence_digits": sequence_digits,
            "shard_digits": shard_digits,
            "zone": zone,
            "conceal": conceal,
            "check_digit": check_digit,
        }
        # Built from the settings on first use; forgotten when they change.
        self._format: OrderNumberFormat | None = None
        self._issuer: StreamIssuer | None = None
        super().__init__(*args, shard_from=shard_from, **kwargs)

    @property
    def format(self) -> OrderNumberFormat:
        fmt = self._format
        if fmt is None:
            fmt = self._format = build_format(self.format_options)
            _built.add(self)
        return fmt

    @property
    def stream(self) -> str:
        return self._stream or f"{self.model._meta.label}.{self.name}"

    def decode(self, number: int | str) -> DecodedOrderNumber:
        return self.format.decode(number)

    def shard_of(self, number: int) -> int:
        """The shard a number routes to (equal to the shard of its user)."""
        return self.format.split(number)[2]

    def _user(self, instance: models.Model) -> int:
        """What the shard of ``instance``'s number comes from (0 without ``shard_from``)."""
        return 0 if self.shard_from is None else self.shard_source(instance)

    def issuer(self) -> StreamIssuer:
        issuer = self._issuer
        if issuer is None:
            issuer = self._issuer = get_issuer(self.stream, self.format)
            _built.add(self)
        return issuer

    def new_number(self, instance: models.Model) -> int:
        return (self._issuer or self.issuer()).next_number(self._user(instance))

    def new_numbers(self, instances: list[models.Model]) -> list[int]:
        users = [0] * len(instances) if self.shard_from is None else self.shard_sources(instances)
        return self.issuer().next_numbers(users)

    generate = new_number

    def check_typed(self, value: Any) -> None:
        """Raise :class:`InvalidId` for a number (int or digits) whose check digit fails;
        anything else (None, an expression, a number of a format without a check digit)
        passes."""
        if isinstance(value, int | str) and not isinstance(value, bool):
            try:
                fmt = self.format
            except LayoutError:
                return
            if fmt.check_digit is not None:
                fmt.check_number(value)

    @property
    def typed_length(self) -> int:
        """How many digits the numbers of a decimal format have (0: they vary)."""
        fmt = self.format
        if fmt.packing != "decimal":
            return 0
        return 12 + fmt.sequence_digits + fmt.shard_digits + (1 if fmt.check_digit else 0)

    def _validate_check_digit(self, value: Any) -> None:
        try:
            self.check_typed(value)
        except InvalidId as exc:
            raise ValidationError(str(exc), code="check_digit") from None

    @property
    def validators(self) -> list[Any]:
        return [*super().validators, self._validate_check_digit]

    def formfield(
        self,
        form_class: type[forms.Field] | None = None,
        choices_form_class: type[forms.ChoiceField] | None = None,
        **kwargs: Any,
    ) -> forms.Field | None:
        """The model's form field, refusing a number whose check digit fails."""
        kwargs["validators"] = [*kwargs.get("validators", ()), self._validate_check_digit]
        if form_class is not None:
            kwargs["form_class"] = form_class
        if choices_form_class is not None:
            kwargs["choices_form_class"] = choices_form_class
        return super().formfield(**kwargs)

    def contribute_to_class(
        self, cls: type[models.Model], name: str, private_only: bool = False, **kwargs: Any
    ) -> None:
        super().contribute_to_class(cls, name, private_only=private_only, **kwargs)
        if not cls._meta.abstract:
            install_insert_retry(cls, self)

    def generated_options(self) -> dict[str, Any]:
        options = {k: v for k, v in self.format_options.items() if v is not None}
        return options if self._stream is None else {"stream": self._stream, **options}

    def check_options(self) -> list[checks.CheckMessage]:
        return [*self.check_shard_from(), *self._check_format(), *self._check_shard_spread()]

    def _check_shard_spread(self) -> list[checks.CheckMessage]:
        try:
            end = self.values_end()
        except (LayoutError, TypeError):
            return []  # E202
        return self.check_shard_spread(end[0])

    def values_end(self) -> tuple[int, int, str]:
        # A number ends with its shard: its shard bits, or for shard digits (n % 10**d, of
        # which 2**d divides 10**d) as many bits as digits.
        fmt = self.format
        width = fmt.shard_bits if fmt.packing == "binary" else fmt.shard_digits
        return width, 0, f"order-number format of stream {self.stream!r}"

    def _check_format(self) -> list[checks.CheckMessage]:
        try:
            fmt = checked_format(self.format_options)
        except (LayoutError, TypeError) as exc:
            decimal = (self.format_options.get("packing") or conf.ORDER_PACKING) == "decimal"
            hint = DECIMAL_FORMATS_HINT if decimal else ""
            return [self.error(f"Invalid order-number format: {exc}", E202, hint=hint)]
        errors: list[checks.CheckMessage] = []
        if zone_has_dst(fmt.zone) and not conf.ORDER_ALLOW_DST:
            errors.append(
                self.error(
                    f"The order-number zone {fmt.zone!r} has daylight saving: its wall clock "
                    "repeats an hour at fall-back, so stems would go backwards. Use a zone "
                    "without DST (UTC), or set SNOWID_ORDER_ALLOW_DST = True to accept that "
                    "numbers continue from the last one through the repeated hour.",
                    "django_snowid.E203",
                )
            )
        for other in self._stream_partners():
            try:
                differs = checked_format(other.format_options) != fmt
            except (LayoutError, TypeError):
                continue  # its own E202
            if differs:
                errors.append(
                    self.error(
                        f"Stream {self.stream!r} is shared with {other.model._meta.label}."
                        f"{other.name}, which uses another format: one stream, one format.",
                        "django_snowid.E204",
                    )
                )
        return errors

    def _stream_partners(self) -> list[Any]:
        """The other order-number fields of this stream."""
        return [f for f in fields_of_stream(self.stream) if f is not self]


class _CheckedExact(lookups.Exact):
    """``number=...`` that refuses a number whose check digit fails (not an empty result)."""

    def get_prep_lookup(self) -> Any:
        self.lhs.output_field.check_typed(self.rhs)
        return super().get_prep_lookup()


class _CheckedIn(lookups.In):
    """``number__in=[...]`` that refuses a number whose check digit fails."""

    def get_prep_lookup(self) -> Any:
        if isinstance(self.rhs, list | tuple | set | frozenset):
            for each in self.rhs:
                self.lhs.output_field.check_typed(each)
        return super().get_prep_lookup()


OrderNumberField.register_lookup(_CheckedExact)
OrderNumberField.register_lookup(_CheckedIn)

# Fields whose format or issuer was built from the settings.
_built: weakref.WeakSet[OrderNumberField] = weakref.WeakSet()


@on_settings_changed
def _forget_formats_and_issuers() -> None:
    for field in list(_built):
        field._format = field._issuer = None
    _built.clear()
