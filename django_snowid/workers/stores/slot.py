"""Host-local worker-id leases: an exclusive ``flock`` on one of N lock files."""

from __future__ import annotations

import fcntl
import glob
import os
import threading
from typing import Any

from ...conf import conf
from ...exceptions import WorkerIdUnavailable
from ...stores.base import Needs
from .base import WHILE_ALIVE, Acquired, LeaseInfo, LeaseRequest, exhausted, horizon_text

__all__ = ["SlotStore", "read_record"]

_ONE_HOST = Needs(one_host=True)


class SlotStore:
    """Host-local slots: an exclusive ``flock`` on one of N files in a directory.

    Unique among the processes of one host; the kernel releases a slot the moment its
    process dies, so there is nothing to renew, and the next process may take it at
    once (``frees_at_once``). Each file also keeps its holders' horizon (``@<unix ms>``)
    and the name of the layout they issue ids of.

    The ``slot`` source's store, and the ``database`` source's on an SQLite file (its
    lock files beside the database file: ``name`` says which, in messages).
    """

    frees_at_once = True
    can_forget = False

    def __init__(self, directory: str, *, name: str = "slot", needs: Needs = _ONE_HOST) -> None:
        self.directory = directory
        self.name = name
        self.needs = needs
        self._files: dict[tuple[str, int], int] = {}
        self._layouts: dict[tuple[str, int], str] = {}
        self._horizons: dict[tuple[str, int], int] = {}  # what each held file records
        self._lock = threading.Lock()

    @classmethod
    def configured(cls) -> SlotStore:
        return cls(conf.WORKER_SLOT_DIR)

    def describe(self) -> str:
        return f"the slot directory {self.directory}"

    def _path(self, pool: str, worker: int) -> str:
        safe = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in pool)
        return os.path.join(self.directory, f"{safe}.{worker}.lock")

    def acquire(self, request: LeaseRequest) -> Acquired:
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise WorkerIdUnavailable(
                f"Cannot create the slot directory {self.directory}: {exc}"
            ) from exc
        pool, layout = request.pool, request.layout
        for worker in request.workers:
            fd = os.open(self._path(pool, worker), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            horizon_ms, _ = read_record(fd)
            recorded = max(horizon_ms, request.horizon_ms)
            with self._lock:
                self._files[(pool, worker)] = fd
                self._layouts[(pool, worker)] = layout
                self._horizons[(pool, worker)] = recorded
            os.pwrite(fd, _record(recorded, layout), 0)
            return Acquired(worker, horizon_ms)
        raise exhausted(pool, request.size, request.size)

    def renew(
        self, pool: str, worker: int, token: str, ttl_ms: int, horizon_ms: int, *, layout: str = ""
    ) -> bool:
        key = (pool, worker)
        with self._lock:  # the heartbeat and the issuing thread both write: never lower
            fd = self._files.get(key)
            if fd is None or not _still_at(fd, self._path(pool, worker)):
                return False  # released, or its file was removed: another may lock a new one
            horizon_ms = max(horizon_ms, self._horizons.get(key, -1))
            os.pwrite(fd, _record(horizon_ms, self._layouts.get(key, layout)), 0)
            self._horizons[key] = horizon_ms
        return True

    def release(self, pool: str, worker: int, token: str, horizon_ms: int) -> None:
        key = (pool, worker)
        with self._lock:
            fd = self._files.pop(key, None)
            layout = self._layouts.pop(key, "")
            self._horizons.pop(key, None)
        if fd is not None:
            os.pwrite(fd, _record(horizon_ms, layout), 0)  # the last tick really used
            os.close(fd)  # releases the lock

    def after_fork(self) -> None:
        # The child's copies of the parent's files: closing them does not release the
        # parent's locks (a flock lives while any descriptor of the open file does), and
        # keeping them would hold the parent's slots after the parent died.
        for fd in self._files.values():
            os.close(fd)
        self._files = {}
        self._layouts = {}
        self._horizons = {}
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
            try:
                with open(path, "rb") as file:
                    horizon_ms, layout = read_record(file.fileno())
            except OSError:  # released and removed meanwhile
                continue
            held.append(LeaseInfo(stem, int(worker), owner, 0, WHILE_ALIVE, horizon_ms, layout))
        return held

    def lock_files(self, *, free: bool = False) -> list[dict[str, Any]]:
        """The lock files of this directory, held (``free``: also free ones), read without
        taking their locks (a starting process would skip a slot we held a moment)."""
        held = _held_inodes()
        rows = []
        for path in sorted(glob.glob(os.path.join(glob.escape(self.directory), "*.*.lock"))):
            pool, _, worker = os.path.basename(path)[: -len(".lock")].rpartition(".")
            info = os.stat(path)
            with open(path, "rb") as slot:
                horizon_ms, layout = read_record(slot.fileno())
            state = (
                "unknown"
                if held is None
                else ("held" if (info.st_dev, info.st_ino) in held else "free")
            )
            if state != "free" or free:
                rows.append(
                    {
                        "pool": pool,
                        "worker_id": worker,
                        "layout": layout,
                        "state": state,
                        "issued_until": horizon_text(horizon_ms),
                    }
                )
        return rows


def _held_inodes() -> set[tuple[int, int]] | None:
    """(device, inode) of every file some process holds a ``flock`` on (Linux's
    /proc/locks), or None where it cannot be known."""
    try:
        with open("/proc/locks") as locks:
            lines = locks.read().splitlines()
    except OSError:
        return None
    held = set()
    for line in lines:
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK":
            major, minor, inode = fields[5].split(":")
            held.add((os.makedev(int(major, 16), int(minor, 16)), int(inode)))
    return held


def _still_at(fd: int, path: str) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (not removed or replaced)."""
    try:
        there = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (there.st_dev, there.st_ino) == (held.st_dev, held.st_ino)


def _record(horizon_ms: int, layout: str) -> bytes:
    # Fixed width for the horizon: a shorter record never leaves digits of a longer one.
    return f"@{horizon_ms:<20d} {layout:<200.200s}\n".encode()


def read_record(fd: int) -> tuple[int, str]:
    """The horizon (Unix ms, -1 if none) and the layout name a lock file records.

    A file without ``@`` was written by an earlier version as a raw tick, which means
    nothing without its epoch and unit: its holder wrote it at most a second before the
    time it names, so the file's modification time plus a second bounds it.
    """
    data = os.pread(fd, 256, 0).decode(errors="replace").split()
    text = data[0] if data else ""
    layout = data[1] if len(data) > 1 else ""
    if text.startswith("@") and text[1:].lstrip("-").isdigit():
        return int(text[1:]), layout
    if text.lstrip("-").isdigit():
        return os.fstat(fd).st_mtime_ns // 1_000_000 + 1000, layout
    return -1, layout


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
