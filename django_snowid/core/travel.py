"""The generator of a test process, whose clock tests freeze and move (docs: "Testing")."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import length_hint
from typing import Any

from .generator import SnowflakeGenerator
from .layout import Layout

__all__ = ["Book", "TimeTravelGenerator"]

Book = dict[int, Iterator[int]]

_books: dict[tuple[int, ...], Book] = {}


class TimeTravelGenerator(SnowflakeGenerator):
    """While ``moved()``, ids carry the clock's tick or the next ticks with ids left: no
    wait, no refusal. Otherwise the plain generator. Every tick used goes in ``book``
    (default: this process's, by layout and worker): no id repeats in the process."""

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
        self._lent = (-1, -1)

    def _enter_current_tick(self) -> None:
        if not self._moved():
            super()._enter_current_tick()
            return
        self._refuse_forked()
        tick = self.layout.tick_of_ns(self._clock())
        used = self._lent[1] if self._lent[0] == tick else tick
        ids = self._book.get(used)
        while ids is not None and not length_hint(ids):
            used += 1
            ids = self._book.get(used)
        if ids is None:
            ids = self._book[used] = self._open_tick(used, after_full=used > tick)
        self._lent = (tick, used)
        self._serve(ids, tick)

    def _start_tick(self, tick: int) -> None:
        ids = self._book.get(tick)
        if ids is None:
            super()._start_tick(tick)
            self._book[tick] = self._ids
            return
        if self._guard is not None:
            self._guard()
        self._serve(ids, tick)
        self.last_tick = tick
