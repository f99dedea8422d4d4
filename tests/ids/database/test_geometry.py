"""A geometry is a projection of its layout: its bits are the layout's, also when it is
rebuilt from its key alone (a migration's)."""

from __future__ import annotations

from django_snowid.core.layout import PRESETS
from django_snowid.ids.database.geometry import Geometry


def test_a_geometry_rebuilt_from_its_key_composes_ids_as_its_layout():
    for layout in (PRESETS["classic"], PRESETS["sharded"], PRESETS["sonyflake"]):
        geometry = Geometry.from_key(Geometry.of(layout).key)
        assert geometry == Geometry.of(layout)
        assert geometry.base(12345, 3) == layout.base(12345, 3) == layout.compose(12345, 3, 0)
        assert (geometry.step, geometry.span) == (layout.id_step, layout.node_span)
        assert geometry.layout.ns_of_tick(7) == layout.ns_of_tick(7)
