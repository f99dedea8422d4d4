"""The pure core of django-snowid: layouts and the generator. No Django, no Redis."""

from .generator import SnowflakeGenerator
from .layout import DEFAULT_EPOCH, PRESETS, DecodedId, Layout, NodePart, layout_from_spec

__all__ = [
    "DEFAULT_EPOCH",
    "PRESETS",
    "DecodedId",
    "Layout",
    "NodePart",
    "SnowflakeGenerator",
    "layout_from_spec",
]
