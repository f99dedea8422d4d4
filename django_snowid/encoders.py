"""JSON for plain Django: integers JavaScript cannot hold exactly are written as strings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

from .core.sent import MAX_SAFE_INTEGER

__all__ = ["MAX_SAFE_INTEGER", "SnowflakeJSONEncoder"]


def _strings_for_unsafe_ints(value: Any) -> Any:
    # JSONEncoder.default() is never called for ints (they are always serializable), so
    # the conversion happens on the way in, over dicts, lists and tuples.
    if type(value) is int:
        return str(value) if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else value
    if isinstance(value, dict):
        return {key: _strings_for_unsafe_ints(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strings_for_unsafe_ints(item) for item in value]
    return value


class SnowflakeJSONEncoder(DjangoJSONEncoder):
    """``DjangoJSONEncoder`` that writes every integer beyond 2**53 - 1 as a string.

    Snowflake ids of 64-bit layouts are such integers, and a browser parsing them as JSON
    numbers would silently change their last digits; ``js53`` ids, counts and other small
    numbers stay numbers. ``JsonResponse(data, encoder=SnowflakeJSONEncoder)``,
    ``json.dumps(data, cls=SnowflakeJSONEncoder)``.
    """

    def iterencode(self, o: Any, _one_shot: bool = False) -> Iterator[str]:
        return super().iterencode(_strings_for_unsafe_ints(o), _one_shot)
