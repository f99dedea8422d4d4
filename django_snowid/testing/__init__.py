"""What a project's tests need of django-snowid (docs: "Testing")."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from ..core.travel import TimeTravelGenerator
from ..ids.issuer import get_generator
from ..settings_layouts import get_layout
from ..workers.sources import worker_node

if TYPE_CHECKING:
    from django.test import override_settings

__all__ = ["follows_moved_clocks", "id_at", "pin_worker_id"]


def id_at(
    moment: datetime,
    *,
    layout: str | None = None,
    worker: int | Mapping[str, int] = 0,
    sequence: int = 0,
    shard: int = 0,
) -> int:
    """The id ``worker`` issues at ``moment`` (aware) in ``layout``; ``LayoutError`` for
    what the layout cannot hold."""
    chosen = get_layout(layout)
    tick = chosen.tick_at(moment)
    return chosen.compose(tick, worker_node(chosen, worker), sequence, shard)


def pin_worker_id(worker: int | Mapping[str, int]) -> override_settings:
    """``override_settings`` under which ids carry ``worker``, a static worker id."""
    from django.test import override_settings

    return override_settings(SNOWID_WORKER_ID_SOURCE="static", SNOWID_WORKER_ID=worker)


def follows_moved_clocks(*, layout: str | None = None) -> bool:
    """Whether ids of ``layout`` follow a clock that freezegun or time-machine moves."""
    return isinstance(get_generator(layout), TimeTravelGenerator)
