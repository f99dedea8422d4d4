"""What a project's tests need of django-snowid (docs: "Testing"): an id made at a given
moment, a pinned worker id, and whether ids follow a clock a test moves.

In a process where Django's test environment is set up (Django's test runner,
pytest-django), ids follow the clock freezegun and time-machine move; see
:mod:`django_snowid.core.travel`. model_bakery fills our fields through
:mod:`django_snowid.testing.bakery`.
"""

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
    """The id ``worker`` issues at ``moment`` (an aware datetime) with ``sequence`` and
    ``shard``, in ``layout`` (a name; default ``SNOWID_LAYOUT``): what a row made then
    carries, to build fixtures or to compare with. Raises
    :class:`~django_snowid.exceptions.LayoutError` for a naive moment, one outside the
    layout's time bits, or a part the layout cannot hold."""
    chosen = get_layout(layout)
    tick = chosen.tick_at(moment)
    return chosen.compose(tick, worker_node(chosen, worker), sequence, shard)


def pin_worker_id(worker: int | Mapping[str, int]) -> override_settings:
    """A decorator or context manager (``override_settings``) under which ids carry
    ``worker``: a fixed worker id (``SNOWID_WORKER_ID_SOURCE = "static"``) instead of a
    leased one. Entering and leaving it makes a new generator."""
    from django.test import override_settings  # not loaded by the app's start (bakery)

    return override_settings(SNOWID_WORKER_ID_SOURCE="static", SNOWID_WORKER_ID=worker)


def follows_moved_clocks(*, layout: str | None = None) -> bool:
    """Whether ids of ``layout`` follow a clock that freezegun or time-machine moves: true
    when this process's generator was made after Django's test environment was set up."""
    return isinstance(get_generator(layout), TimeTravelGenerator)
