"""This process's generators, one per layout name, the fork guard, and ``next_id``,
``next_ids`` and ``decode``."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from typing import Any

from django.db.models import Field

from .. import inventory, metrics
from ..conf import conf, on_settings_changed
from ..core.clocks import clock_mover, moved_time_ns, real_monotonic, real_time_ns
from ..core.generator import Reporter, SnowflakeGenerator
from ..core.layout import DecodedId, Layout
from ..core.travel import TimeTravelGenerator
from ..db.private import test_environment_is_set_up
from ..exceptions import LayoutError, StaticWorkerIdAfterFork
from ..settings_layouts import DEFAULT, get_layout, layout_names
from ..workers.leased import lease_generator, lease_of
from ..workers.pool import pool_name
from ..workers.sources import LEASE_SOURCES, resolve_worker_id, worker_for

__all__ = ["decode", "get_generator", "next_id", "next_ids", "reset"]

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_generators: metrics.Registry[str, SnowflakeGenerator] = metrics.Registry()
# The worker-id source each generator was made with: the ``store`` label of its ids.
_sources: dict[str, str] = {}
# Node values this process's generators used, and those its parent had used.
_claimed_nodes: set[tuple[str, int]] = set()
_inherited_nodes: set[tuple[str, int]] = set()
_forked_from: int | None = None
# The environment this process was forked with (an "env" worker id unchanged since).
_environ_at_fork: dict[str, str] = {}


def get_generator(name: str | None = None) -> SnowflakeGenerator:
    """This process's generator for the layout called ``name``."""
    key = name or DEFAULT
    generator = _generators.get(key)
    if generator is not None:
        return generator
    with _lock:
        generator = _generators.get(key)
        if generator is None:
            generator = _generators[key] = _create_generator(key)
    return generator


def next_id(*, layout: str | None = None) -> int:
    """A new id from this process's generator for ``layout`` (default: ``SNOWID_LAYOUT``)."""
    return get_generator(layout).next_id()


def next_ids(count: int, *, layout: str | None = None) -> list[int]:
    """``count`` new increasing ids in one call (what ``bulk_create`` wants)."""
    return get_generator(layout).next_ids(count)


def decode(value: int | str, *, layout: str | Layout | None = None) -> DecodedId:
    """Take an id of ``layout`` (a name or a Layout) apart, or raise :class:`InvalidId`."""
    return get_layout(layout).decode(value)


class _Reporter(Reporter):
    """Counts (and, when it matters, logs) a ``layout`` generator's waits and refusals."""

    def __init__(self, layout: str) -> None:
        self.layout = layout

    def tick_full(self) -> None:
        metrics.count("waits", "ids", "second_full")

    def clock_wait(self, behind_ms: float) -> None:
        metrics.count("waits", "ids", "clock_behind")
        logger.warning(
            "Clock behind: layout %r waits %.1f ms for the host clock to pass the last "
            "tick issued (a step back of the clock, or a previous holder's horizon).",
            self.layout,
            behind_ms,
        )

    def clock_refused(self, behind_ms: float) -> None:
        metrics.refused(
            logger,
            "ids",
            "clock_behind",
            f"layout {self.layout!r}: the host clock is {behind_ms:.1f} ms behind the last "
            "tick issued (more than SNOWID_CLOCK_BACKWARDS_TOLERANCE_MS). Check NTP.",
        )

    def time_bits_refused(self) -> None:
        metrics.refused(
            logger,
            "ids",
            "time_bits",
            f"layout {self.layout!r}: the clock is outside its time bits.",
        )


def _issued() -> Iterator[tuple[str, tuple[str, ...], metrics.Reader]]:
    """Readers of the ids this process's live generators issued, by layout and source."""
    for key, generator in list(_generators.items()):
        yield "ids_issued", (key, _sources.get(key, "")), generator.issued


metrics.register(live=_issued)


def _create_generator(key: str) -> SnowflakeGenerator:
    layout = get_layout(key)
    worker = resolve_worker_id()
    source = conf.WORKER_ID_SOURCE
    tolerance = float(conf.CLOCK_BACKWARDS_TOLERANCE_MS)
    _sources[key] = source
    moved = _moved_clock_options()
    if source in LEASE_SOURCES:
        return lease_generator(
            layout,
            worker,
            source,
            fields=_fields_of(key),
            on_lost=lambda: _drop(key),
            backwards_tolerance_ms=tolerance,
            report=_Reporter(key),
            companions=_lease_pools(),
            **moved,
        )
    generator_type = moved.pop("generator_type", SnowflakeGenerator)
    moved.pop("lease_clocks", None)
    generator = generator_type(
        layout,
        worker_for(layout, worker),
        backwards_tolerance_ms=tolerance,
        report=_Reporter(key),
        **moved,
    )
    node = generator.node
    if _forked_from is not None and (
        source == "static" or (key, node) in _inherited_nodes or _env_inherited(source)
    ):
        raise StaticWorkerIdAfterFork(
            f"Process {os.getpid()} was forked from process {_forked_from} and would issue "
            f"ids with the same worker id ({worker!r}, SNOWID_WORKER_ID_SOURCE="
            f"{source!r}) as its parent and siblings: their ids would collide. "
            "This happens with gunicorn --preload, Celery prefork and multiprocessing when "
            "every process gets one fixed worker id, or an 'env' value inherited unchanged "
            "from the parent's environment. Use a leased worker id "
            "(SNOWID_WORKER_ID_SOURCE = 'database', 'redis' or 'slot'), or give each process "
            "its own (SNOWID_WORKER_ID_SOURCE='env' with a distinct value set after the fork, "
            "e.g. in gunicorn's post_fork hook); see the manual, docs/workers.rst, "
            '"Fixed worker ids and forks".'
        )
    _claimed_nodes.add((key, node))
    return generator


def _moved_clock_options() -> dict[str, Any]:
    """In Django's test environment, a generator that follows a moved clock (docs:
    "Testing"), on a lease on the host's real clocks; elsewhere nothing."""
    if not test_environment_is_set_up():
        return {}
    return {
        "generator_type": TimeTravelGenerator,
        "clock": moved_time_ns,
        "moved": clock_mover,
        "lease_clocks": (real_time_ns, real_monotonic),
    }


def _lease_pools() -> list[str]:
    """The pools of every layout of the settings that has node bits to lease."""
    pools = []
    for name in layout_names():
        try:
            layout = get_layout(name)
        except LayoutError:
            continue  # a system check says why
        if layout.node_parts:
            pools.append(pool_name(layout))
    return pools


def _fields_of(key: str) -> list[Field]:
    """The Snowflake fields whose ids use the layout called ``key``."""
    return [
        field
        for field in inventory.fields("snowflake")
        if (getattr(field, "layout_name", None) or DEFAULT) == key
    ]


def _env_inherited(source: str) -> bool:
    if source != "env":
        return False
    name = conf.WORKER_ID_ENV
    return os.environ.get(name) == _environ_at_fork.get(name)


def _drop(key: str) -> None:
    """Forget a generator whose lease was lost: the next call takes a new lease."""
    _retire(key, _generators.pop(key, None))


def _retire(key: str, generator: SnowflakeGenerator | None) -> None:
    """Keep the count of a generator that is forgotten: the counter never goes back."""
    if generator is not None:
        metrics.count("ids_issued", key, _sources.get(key, ""), by=generator.issued())


def reset() -> None:
    """Forget every generator and release its lease; runs when a setting changes."""

    with _lock:
        generators = list(_generators.items())
        _generators.clear()
    for key, generator in generators:
        _retire(key, generator)
        lease = lease_of(generator)
        if lease is not None:
            lease.release()


on_settings_changed(reset)


def _after_fork_in_child() -> None:
    global _forked_from, _lock
    _forked_from = os.getppid()
    _environ_at_fork.clear()
    _environ_at_fork.update(os.environ)
    _inherited_nodes.update(_claimed_nodes)
    _claimed_nodes.clear()
    _generators.clear()
    _lock = threading.Lock()  # the parent may have held it while forking


os.register_at_fork(after_in_child=_after_fork_in_child)
