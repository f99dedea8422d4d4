"""The layouts of the settings (``"default"`` and ``SNOWID_LAYOUTS``), built once per settings."""

from __future__ import annotations

from .conf import conf, on_settings_changed
from .core.echo import shown
from .core.layout import Layout, layout_from_spec
from .exceptions import LayoutError

__all__ = ["DEFAULT", "build_layout", "get_layout", "layout_names"]

#: The name of ``SNOWID_LAYOUT``'s layout.
DEFAULT = "default"

_layouts: dict[str, Layout] = {}
on_settings_changed(_layouts.clear)


def layout_names() -> list[str]:
    """``"default"`` and every name in ``SNOWID_LAYOUTS``."""
    return [DEFAULT, *(name for name in conf.LAYOUTS if name != DEFAULT)]


def build_layout(name: str | None = None) -> Layout:
    """Build a layout from the settings, without caching (the system checks use this)."""
    name = name or DEFAULT
    if name == DEFAULT:
        return layout_from_spec(conf.LAYOUT, epoch=conf.EPOCH, name=DEFAULT)
    spec = conf.LAYOUTS.get(name)
    if spec is None:
        named = sorted(n for n in conf.LAYOUTS if n != DEFAULT)
        raise LayoutError(
            f"Unknown layout {shown(name)}: the layouts are {DEFAULT!r} (SNOWID_LAYOUT) and "
            f"those SNOWID_LAYOUTS names ({', '.join(map(repr, named)) or 'none'})."
        )
    return layout_from_spec(spec, epoch=conf.EPOCH, name=name)


def get_layout(name: str | Layout | None = None) -> Layout:
    """The layout called ``name`` in the settings (``None``: ``SNOWID_LAYOUT``)."""
    if isinstance(name, Layout):
        return name
    key = name or DEFAULT
    layout = _layouts.get(key)
    if layout is None:
        layout = _layouts.setdefault(key, build_layout(key))
    return layout
