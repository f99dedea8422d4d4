"""Public ids (the ``django-snowid[sqids]`` extra): an id shown as a short opaque string,
obfuscation, not encryption (docs: "Public ids that hide volume and time")."""

from __future__ import annotations

import functools
import secrets
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import models
from sqids import Sqids
from sqids.constants import DEFAULT_ALPHABET

from ..conf import conf
from ..exceptions import InvalidPublicId

__all__ = [
    "DEFAULT_ALPHABET",
    "PublicIdConverter",
    "PublicIdQuerySet",
    "decode_id",
    "encode_id",
    "new_alphabet",
]

MAX_ID = 2**63 - 1
# Longer than any canonical public id of a 63-bit value, refused before sqids sees it.
MAX_LENGTH = 255


def new_alphabet() -> str:
    """A fresh random ``SNOWID_PUBLIC_ID_ALPHABET`` (sqids' 62 letters and digits)."""
    return "".join(secrets.SystemRandom().sample(DEFAULT_ALPHABET, len(DEFAULT_ALPHABET)))


@functools.lru_cache(maxsize=8)
def _sqids(alphabet: str, min_length: int) -> Sqids:
    return Sqids(alphabet=alphabet, min_length=min_length)


def coder() -> Sqids:
    """The project's encoder (``SNOWID_PUBLIC_ID_ALPHABET``, ``..._MIN_LENGTH``)."""
    alphabet = conf.PUBLIC_ID_ALPHABET
    if alphabet is None:
        raise ImproperlyConfigured(
            "Public ids need SNOWID_PUBLIC_ID_ALPHABET: a shuffled alphabet of your own "
            '(python -c "from django_snowid.ids.publicids import new_alphabet; '
            'print(new_alphabet())").'
        )
    return _sqids(alphabet, conf.PUBLIC_ID_MIN_LENGTH)


def encode_id(value: int) -> str:
    """The public id of ``value`` (an int id in 0..2**63 - 1)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_ID:
        raise InvalidPublicId(f"{value!r} is not an id: expected an integer in 0..{MAX_ID}.")
    return coder().encode([value])


def decode_id(text: object) -> int:
    """The id a canonical public id stands for, or :class:`InvalidPublicId`."""
    if not isinstance(text, str) or not 0 < len(text) <= MAX_LENGTH:
        raise InvalidPublicId(f"{text!r} is not a public id.")
    sqids = coder()
    try:
        numbers = sqids.decode(text)
    except (ValueError, IndexError, OverflowError):  # defensive: sqids refuses or chokes
        numbers = []
    if len(numbers) != 1 or not 0 <= numbers[0] <= MAX_ID or sqids.encode(numbers) != text:
        raise InvalidPublicId(f"{text!r} is not a public id.")
    return numbers[0]


class PublicIdConverter:
    """A path converter: ``<snowid_public:pk>`` gives the view the int id."""

    regex = "[^/]+"

    def to_python(self, value: str) -> int:
        return decode_id(value)  # InvalidPublicId is a ValueError: the URL does not match

    def to_url(self, value: Any) -> str:
        return encode_id(value.pk if isinstance(value, models.Model) else value)


class PublicIdQuerySet(models.QuerySet):
    """``Model.objects.public_id(text)``: the rows (zero or one) with that public id."""

    def public_id(self, text: object) -> PublicIdQuerySet:
        """Filter by public id; a string that is none gives an empty queryset."""
        try:
            return self.filter(pk=decode_id(text))
        except InvalidPublicId:
            return self.none()

    def get_by_public_id(self, text: object) -> models.Model:
        """``get()`` by public id, and like ``get()`` it raises ``Model.DoesNotExist`` (for
        a string that is no public id too): in a view, catch it, or use
        ``get_object_or_404(Model.objects.public_id(text))``, which gives a 404."""
        return self.public_id(text).get()
