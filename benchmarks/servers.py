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


class OwnPostgres:
    """``with OwnPostgres(max_connections=150) as pg: pg.dsn``: a PostgreSQL server of a
    benchmark's own (initdb in a scratch directory, a free loopback port, trust), stopped
    and removed at the end. PostgreSQL refuses to run as root: as root it runs as the
    ``postgres`` user."""

    def __init__(self, *, max_connections: int = 150) -> None:
        self.port = free_port()
        self.max_connections = max_connections
        self.workdir = tempfile.mkdtemp(prefix="snowid-bench-pg-")
        self.data = os.path.join(self.workdir, "data")
        found = shutil.which("pg_ctl") or "pg_ctl"
        self.bin = os.path.dirname(os.path.realpath(found))
        self.dsn = f"host=127.0.0.1 port={self.port} user=postgres"

    def _run(self, *command: str) -> None:
        if os.geteuid() == 0:
            line = " ".join(f"'{part}'" for part in command)
            command = ("su", "postgres", "-c", line)
        subprocess.run(command, check=True, capture_output=True, cwd="/tmp")

    def __enter__(self) -> OwnPostgres:
        os.chmod(self.workdir, 0o777)
        self._run(f"{self.bin}/initdb", "-D", self.data, "-U", "postgres", "--auth=trust")
        options = (
            f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1 "
            f"-c max_connections={self.max_connections} -c fsync=off"
        )
        log = os.path.join(self.workdir, "log")
        self._run(f"{self.bin}/pg_ctl", "-D", self.data, "-o", options, "-l", log, "-w", "start")
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._run(f"{self.bin}/pg_ctl", "-D", self.data, "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)
