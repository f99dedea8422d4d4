"""The heartbeat thread: calls a beat until it says stop or is stopped."""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.db import connections

__all__ = ["Heartbeat"]


class Heartbeat:
    """Calls ``beat`` on a daemon thread, ``pause`` seconds after starting and then after
    the pause each beat returns, until a beat returns ``None`` or ``stop()``."""

    def __init__(self, beat: Callable[[], float | None], pause: float) -> None:
        self._beat = beat
        self._pause = pause
        self._stop = threading.Event()

    def start(self, name: str) -> None:
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        try:
            pause: float | None = self._pause
            while pause is not None and not self._stop.wait(pause):
                pause = self._beat()
        finally:
            connections.close_all()  # this thread's own connections only
