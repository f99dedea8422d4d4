"""Host-local worker-id leases: an exclusive ``flock`` on one of N lock files."""

from __future__ import annotations

import fcntl
import os
import threading

from ...exceptions import WorkerIdUnavailable
from .base import WHILE_ALIVE, Acquired, LeaseInfo, exhausted

__all__ = ["SlotStore"]


class SlotStore:
    """Host-local slots: an exclusive ``flock`` on one of N files in a directory.

    Unique among the processes of one host; the kernel releases a slot the moment its
    process dies, so there is nothing to renew. Each file also keeps the tick bound of
    its holders.
    """

    name = "slot"

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._files: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()

    def _path(self, pool: str, worker: int) -> str:
        safe = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in pool)
        return os.path.join(self.directory, f"{safe}.{worker}.lock")

    def acquire(
        self, pool: str, size: int, owner: str, token: str, ttl_ms: int, *, first: int = 0
    ) -> Acquired:
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise WorkerIdUnavailable(
                f"Cannot create the slot directory {self.directory}: {exc}"
            ) from exc
        for worker in range(first, first + size):
            fd = os.open(self._path(pool, worker), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            data = os.pread(fd, 64, 0).decode(errors="replace").split()
            text = data[0] if data else ""
            with self._lock:
                self._files[(pool, worker)] = fd
            if text.startswith("@") and text[1:].isdigit():  # "@<unix ms>"
                return Acquired(worker, int(text[1:]), bound_is_ms=True)
            # A raw tick (written by an earlier version): read in this layout.
            return Acquired(worker, int(text) if text.lstrip("-").isdigit() else -1)
        raise exhausted(pool, size, size)

    def renew(self, pool: str, worker: int, token: str, ttl_ms: int, tick_bound: int) -> bool:
        fd = self._files.get((pool, worker))
        if fd is None:
            return False
        os.pwrite(fd, f"@{tick_bound:<20d}\n".encode(), 0)
        return True

    def release(self, pool: str, worker: int, token: str, tick_bound: int) -> None:
        if self.renew(pool, worker, token, 0, tick_bound):
            with self._lock:
                fd = self._files.pop((pool, worker))
            os.close(fd)  # releases the lock

    def forget_after_fork(self) -> None:
        # The child's copies of the parent's files: closing them does not release the
        # parent's locks (a flock lives while any descriptor of the open file does), and
        # keeping them would hold the parent's slots after the parent died.
        for fd in self._files.values():
            os.close(fd)
        self._files = {}
        self._lock = threading.Lock()

    def leases(self, pool: str | None = None) -> list[LeaseInfo]:
        """The held slots: this process's, and those another process locks (probed)."""
        if not os.path.isdir(self.directory):
            return []
        held: list[LeaseInfo] = []
        ours = {self._path(p, w): (p, w) for p, w in self._files}
        for name in sorted(os.listdir(self.directory)):
            stem, dot, worker = name.removesuffix(".lock").rpartition(".")
            if not (dot and name.endswith(".lock") and worker.isdigit()):
                continue
            path = os.path.join(self.directory, name)
            if pool is not None and path != self._path(pool, int(worker)):
                continue
            owner = "this process" if path in ours else "another process of this host"
            if path not in ours and not _locked(path):
                continue
            held.append(LeaseInfo(stem, int(worker), owner, 0, WHILE_ALIVE, -1))
        return held


def _locked(path: str) -> bool:
    """Whether another open file holds ``path``'s lock (we try to take it, and let go)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
