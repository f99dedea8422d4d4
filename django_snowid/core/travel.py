"""The generator of a test process, whose clock tests freeze and move (docs: "Testing").

While ``moved()`` says a tool moves the clock, ids carry the clock's tick, or the next
ticks with ids left when it is full: never a wait, never a refusal of a clock behind.
Otherwise it is the plain generator. Every tick it used is kept in a book shared by the
generators of one layout and worker in this process, so that no id repeats in the
process, whichever way and however often the clock jumps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import length_hint
from typing import Any

from .generator import SnowflakeGenerator
from .layout import Layout

__all__ = ["Book", "TimeTravelGenerator"]

#: The ids left in each tick a generator of one layout and worker used.
Book = dict[int, Iterator[int]]

#: This process's books, by the ids they hold: a layout's geometry and a node value (a
#: layout built again from the same settings shares its book).
_books: dict[tuple[int, ...], Book] = {}


class TimeTravelGenerator(SnowflakeGenerator):
    """A :class:`SnowflakeGenerator` that follows a clock a test moves (``moved()`` says
    when it does). ``book``: the ticks used so far (default: this process's book of the
    layout and worker). Ids made while the clock is moved are unique in the process, not
    across processes: the lease store records only the host's real time."""

    def __init__(
        self,
        layout: Layout,
        worker: Any = 0,
        *,
        moved: Callable[[], object],
        book: Book | None = None,
        **options: Any,
    ) -> None:
        super().__init__(layout, worker, **options)
        self._moved = moved
        if book is None:
            space = (layout.epoch_ns, layout.unit_ns, layout.time_shift, layout.node_shift)
            book = _books.setdefault((*space, layout.id_step, self.node), {})
        self._book = book

    def _enter_current_tick(self) -> None:
        if not self._moved():
            super()._enter_current_tick()
            return
        self._refuse_forked()
        tick = self.layout.tick_of_ns(self._clock())
        # The clock's tick, or the first after it with ids left; last_tick (what the
        # plain generator and the lease go by) stays the host's.
        used = tick
        ids = self._book.get(used)
        while ids is not None and not length_hint(ids):
            used += 1
            ids = self._book.get(used)
        if ids is None:
            ids = self._book[used] = self._open_tick(used, after_full=used > tick)
        self._serve(ids, tick)

    def _start_tick(self, tick: int) -> None:
        ids = self._book.get(tick)
        if ids is None:
            super()._start_tick(tick)
            self._book[tick] = self._ids
            return
        # A tick used while the clock was moved: go on where it stopped.
        if self._guard is not None:
            self._guard()
        self._serve(ids, tick)
        self.last_tick = tick
