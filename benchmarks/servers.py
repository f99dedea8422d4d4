"""A redis-server of a benchmark's own: on a free loopback port, nothing on disk, stopped by
pid (never the shared Redis)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def wait_port(host: str, port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class OwnRedis:
    """``with OwnRedis() as redis: redis.port``."""

    def __init__(self) -> None:
        self.port = free_port()
        self.workdir = tempfile.mkdtemp(prefix="snowid-bench-redis-")
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> OwnRedis:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.workdir],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_port("127.0.0.1", self.port)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        shutil.rmtree(self.workdir, ignore_errors=True)
