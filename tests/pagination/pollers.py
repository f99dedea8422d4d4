"""Clients that poll for new rows three ways (ours with ``min_id``, DRF's
CursorPagination, a naive ``pk > last seen``), and writers stepped one statement at a
time from the test, each in a thread with its own connection."""

from __future__ import annotations

import queue
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from django.db import connection

from tests.feedapp.models import Post


class Poller:
    """Counts every row a client was served."""

    def __init__(self) -> None:
        self.served: Counter[int] = Counter()

    def poll(self) -> list[int]:
        raise NotImplementedError

    def record(self, ids: list[int]) -> list[int]:
        self.served.update(ids)
        return ids


class Ours(Poller):
    """Follows ``rel="prev"`` (``min_id`` = the newest id served) from ``start``."""

    def __init__(self, client: Any, start: int, url: str = "/feed/posts/") -> None:
        super().__init__()
        self.client = client
        self.url = f"{url}?min_id={start}&limit=50"
        self.settled = 0

    def poll(self) -> list[int]:
        body = self.client.get(self.url).json()
        self.settled = int(body["settled_id"] or 0)
        self.url = body["previous"] or self.url
        return self.record([int(row["id"]) for row in body["results"]])


class DrfCursor(Poller):
    """DRF's CursorPagination, oldest first: follows ``next`` to the end, then asks the
    last page again."""

    def __init__(self, client: Any) -> None:
        super().__init__()
        self.client = client
        self.url = "/feed/drf-cursor/"

    def poll(self) -> list[int]:
        new: list[int] = []
        while True:
            body = self.client.get(self.url).json()
            new += [int(row["id"]) for row in body["results"]]
            if not body["next"]:
                return self.record([i for i in new if i not in self.served])
            self.url = body["next"]


class Naive(Poller):
    """``pk > the newest id seen``."""

    def __init__(self, start: int) -> None:
        super().__init__()
        self.last = start

    def poll(self) -> list[int]:
        ids = list(
            Post.objects.filter(pk__gt=self.last).order_by("pk").values_list("pk", flat=True)
        )
        self.last = max([self.last, *ids])
        return self.record(ids)


class Writer:
    """A thread with its own database connection that runs the steps it is given, one at
    a time, each to its end before ``step`` returns."""

    def __init__(self) -> None:
        self.steps: queue.Queue[Callable[[], Any] | None] = queue.Queue()
        self.done: queue.Queue[tuple[bool, Any]] = queue.Queue()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (step := self.steps.get()) is not None:
            try:
                self.done.put((True, step()))
            except BaseException as exc:
                self.done.put((False, exc))
        connection.close()

    def step(self, function: Callable[[], Any]) -> Any:
        self.steps.put(function)
        ok, value = self.done.get(timeout=60)
        if not ok:
            raise value
        return value

    def close(self) -> None:
        self.steps.put(None)
        self.thread.join(60)
