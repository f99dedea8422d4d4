"""The pure core of django-snowid: layouts and the generator. No Django, no Redis."""

from .generator import SnowflakeGenerator as SnowflakeGenerator
from .layout import DEFAULT_EPOCH as DEFAULT_EPOCH
from .layout import PRESETS as PRESETS
from .layout import DecodedId as DecodedId
from .layout import Layout as Layout
from .layout import NodePart as NodePart
from .layout import layout_from_spec as layout_from_spec
