"""Helpers shared by the tests."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from django_snowid.core.layout import DEFAULT_EPOCH

#: The checkout: the package, docs/, benchmarks/, example_project/.
ROOT = Path(__file__).resolve().parent.parent

EPOCH_NS = int(DEFAULT_EPOCH.timestamp()) * 1_000_000_000
MS = 1_000_000


#: The time-to-live of the worker-id leases in tests of several processes (conftest's
#: ``source`` fixture): a heartbeat every 0.5 s.
LEASE_TTL_S = 1.5


class Clock:
    """Unix seconds that move only when told to (the sequence stores' clock)."""

    def __init__(self, when: datetime) -> None:
        self.now = when.timestamp()

    def __call__(self) -> float:
        return self.now


class FakeClock:
    """A clock that moves only when told to (or when the generator sleeps)."""

    def __init__(self, start_ns: int = EPOCH_NS + 1_000_000 * MS) -> None:
        self.ns = start_ns
        self.sleeps: list[float] = []

    def __call__(self) -> int:
        return self.ns

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.ns += max(int(seconds * 1e9), 1_000)  # a spin still lets time pass

    def advance_ms(self, ms: float) -> None:
        self.ns += int(ms * MS)

    def now(self) -> datetime:
        """The clock's time as an aware UTC datetime."""
        return datetime.fromtimestamp(self.ns / 10**9, tz=timezone.utc)


def scratch_database_name(purpose: str) -> str:
    """The name of a database a test makes for ``purpose`` on a shared server: the run's
    database name (``SNOWID_TEST_DB_NAME``) and the pytest-xdist worker's, so that two
    checkouts or two workers never make the same one."""
    base = os.environ.get("SNOWID_TEST_DB_NAME", "snowid")
    return f"{base}_{purpose}{os.environ.get('PYTEST_XDIST_WORKER', '')}"


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def redis_server_command(port: int, workdir: str, *extra: str) -> list[str]:
    """A redis-server on 127.0.0.1:``port`` that keeps nothing on disk."""
    return [
        "redis-server",
        *("--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"),
        # A replica syncs at once (Redis waits 5 s by default for other replicas to join).
        *("--dir", workdir, "--repl-diskless-sync-delay", "0", *extra),
    ]


class ThrowawayRedis:
    """A redis-server owned by one test: it may be stopped, restarted and flushed at will.

    It keeps nothing on disk, so a restart loses every key (like a crash without AOF).
    """

    def __init__(self, workdir: str, *options: str) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.options = options  # more redis-server options: "--replicaof", "127.0.0.1", ...
        self.process: Any = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> Any:
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)

    def start(self) -> None:
        import subprocess
        import time

        self.process = subprocess.Popen(
            redis_server_command(self.port, self.workdir, *self.options),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.client().ping():
                    return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def caches(self) -> dict[str, Any]:
        """CACHES pointing the ``snowid`` alias at this server."""
        return redis_caches(self.url)


class DroppingProxy:
    """A TCP proxy in front of a real server that cuts the connection (both ends) when the
    client sends ``marker``, ``times`` times (``None``: every time): a network that fails
    at one chosen command. ``answer``: answers the command itself instead (an error, as a
    proxy that does not serve it does, Envoy or twemproxy; or text about itself).
    :meth:`retarget` moves it to another server, cutting the connections it holds (a
    failover behind a proxy)."""

    def __init__(
        self, port: int, marker: bytes, times: int | None = 1, *, answer: bytes | None = None
    ) -> None:
        import socket

        self.target = port
        self.marker = marker
        self.left = times
        self.answer = answer
        self.dropped = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open: list[tuple[Any, Any]] = []

    def caches(self) -> dict[str, Any]:
        """CACHES pointing the ``snowid`` alias at this proxy."""
        return redis_caches(f"redis://127.0.0.1:{self.port}/0")

    def __enter__(self) -> DroppingProxy:
        import threading

        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.listener.close()

    def retarget(self, port: int) -> None:
        """Send new connections to ``port``, and cut every connection made so far."""
        import socket

        self.target = port
        for pair in list(self.open):
            for end in pair:
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def _accept(self) -> None:
        import socket
        import threading

        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed by __exit__
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            self.open.append((client, server))
            pumps = [threading.Semaphore(0)]  # released by the first pump that ends
            for source, sink, watched in ((client, server, True), (server, client, False)):
                threading.Thread(
                    target=self._pump, args=(source, sink, watched, pumps), daemon=True
                ).start()

    def _pump(self, source: Any, sink: Any, watched: bool, pumps: list[Any]) -> None:
        import socket

        try:
            while data := source.recv(65536):
                if watched and self.marker in data and self.left != 0:
                    self.dropped += 1
                    if self.left is not None:
                        self.left -= 1
                    if self.answer is not None:
                        source.sendall(self.answer)
                        continue
                    break
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):  # wakes the other pump; the descriptors stay open
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
        # The last pump to end closes both sockets: closing while the other still uses
        # them could let a new connection reuse a descriptor and be cut by mistake.
        if pumps[0].acquire(blocking=False):
            with contextlib.suppress(ValueError):
                self.open.remove((source, sink) if watched else (sink, source))
            source.close()
            sink.close()
        else:
            pumps[0].release()


#: What a client sends for the command INFO (and not for CLIENT SETINFO).
INFO_COMMAND = b"$4\r\nINFO\r\n"
_PROXY_INFO = b"# Server\r\nproxy_version:1.0\r\nrun_id:a-proxy-answers-for-itself\r\n"
#: How proxies answer INFO: refused (an error), the connection dropped, or an answer of
#: the proxy's own (here with a run_id of its own, the same whatever server is behind it).
INFO_ANSWERS: dict[str, bytes | None] = {
    "refused": b"-ERR unknown command 'INFO'\r\n",
    "dropped": None,
    "the proxy's own": b"$%d\r\n%s\r\n" % (len(_PROXY_INFO), _PROXY_INFO),
}


def redis_caches(url: str) -> dict[str, Any]:
    return {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "snowid": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": url,
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 2, "SOCKET_TIMEOUT": 2},
        },
    }


def check_ids(**settings: Any) -> list[str]:
    """The ids of our system-check messages under ``settings``, without ``--database``.

    ``databases=[]`` keeps Django 6.1's model checks (which otherwise open every configured
    database for a JSONField) off the database, as the tests calling this have no access."""
    from django.core import checks
    from django.test import override_settings

    with override_settings(**settings):
        return [
            m.id
            for m in checks.run_checks(databases=[])
            if m.id and m.id.startswith("django_snowid")
        ]


def manage_in_subprocess(*args: str) -> Any:
    """``python -m django *args`` on the test settings in a process of its own: what a
    person at a shell sees (exit status, stderr), tracebacks included."""
    from django.db import connection

    env = {"DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(ROOT)}
    if connection.vendor != "sqlite":
        # The test database (the one that exists now): Django 6's MySQL checks connect.
        env["SNOWID_TEST_DB_NAME"] = str(connection.settings_dict["NAME"])
    return _django(args, env, ROOT)


def _django(args: tuple[str, ...], env: dict[str, str], cwd: Path) -> Any:
    """``python -m django *args`` in ``cwd``, ``env`` added to ours."""
    return subprocess.run(
        [sys.executable, "-m", "django", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=cwd,
        timeout=120,
    )


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """``python -c code`` on the test settings in a process of its own, where Django's test
    environment is not set up (as in a deployment); fails on a non-zero exit."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=True,
    )


def held_slots(directory: str) -> list[str]:
    """The lock files in ``directory`` that some process holds (probed with ``flock``)."""
    import fcntl
    import os

    held: list[str] = []
    if not os.path.isdir(directory):
        return held
    for name in sorted(os.listdir(directory)):
        fd = os.open(os.path.join(directory, name), os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            held.append(name)
        finally:
            os.close(fd)
    return held


def set_order_state(stream: str, position: tuple[int, int]) -> None:
    """Write a stream's state straight into the current order store (as a store that lost
    or gained writes would hold it)."""
    from django_snowid.orders.stores import get_store

    store = get_store()
    second, sequence = position
    if store.name == "redis":
        from django_snowid.stores.redis_scripts import server_id

        key = store.key(stream)  # type: ignore[attr-defined]
        client = store.client()  # type: ignore[attr-defined]
        client.delete(key)
        # Stamped with the identity of the server that holds it: written by this server,
        # not one a failover brought in (whose state the store re-syncs first).
        rid = server_id(client, key)
        client.hset(key, mapping={"sec": second, "seq": sequence, "rid": rid})
    else:
        from django_snowid.models import OrderStreamState

        OrderStreamState.objects.update_or_create(
            name=stream, defaults={"second": second, "sequence": sequence}
        )


def forget(stream: str) -> None:
    """Drop a stream's state from the current order store (as a flushed Redis would)."""
    from django_snowid.orders.stores import get_store

    store = get_store()
    if store.name == "redis":
        store.client().delete(store.key(stream))  # type: ignore[attr-defined]
    else:
        from django_snowid.models import OrderStreamState

        OrderStreamState.objects.filter(name=stream).delete()


class Children:
    """Processes forked from a test, and the queue they answer on: the tests' one harness
    for real processes.

        with Children() as children:
            ready = children.context.Event()  # or Barrier, Semaphore, Value, Array
            children.start(target, argument, ready, children.queue)
            ...
            replies = children.results()  # one a child, 60 s each at most

    Each ``start`` first closes this process's database connections (those outside a
    transaction): a child must not share its parent's sockets. Leaving the ``with`` sets
    ``children.stop`` and joins the children; one still alive after 30 s is killed.
    """

    def __init__(self) -> None:
        self.context = multiprocessing.get_context("fork")
        self.queue = self.context.Queue()
        self.stop = self.context.Event()
        self.processes: list[Any] = []

    def start(self, target: Callable[..., object], *args: Any) -> Any:
        from django.db import connections

        for connection in connections.all(initialized_only=True):
            if not connection.in_atomic_block:
                connection.close()
        process = self.context.Process(target=target, args=args)
        process.start()
        self.processes.append(process)
        return process

    def kill_when_running(self, target: Callable[..., object], *args: Any, after_s: float) -> None:
        """Start ``target(*args, ready)``; once it sets ``ready``, let it run ``after_s``
        seconds more and kill it with SIGKILL (no exit handler, no ``finally``)."""
        ready = self.context.Event()
        process = self.start(target, *args, ready)
        assert ready.wait(20), "the child never got ready"
        time.sleep(after_s)
        os.kill(process.pid, signal.SIGKILL)
        process.join()

    def results(self, count: int | None = None, timeout: float = 60) -> list[Any]:
        """``count`` replies (default: one a child started), in the order they came."""
        wanted = len(self.processes) if count is None else count
        return [self.queue.get(timeout=timeout) for _ in range(wanted)]

    def __enter__(self) -> Children:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for process in self.processes:
            process.join(30)
            if process.is_alive():
                process.kill()
                process.join()


def in_child(function: Callable[[], object]) -> str:
    """Run ``function`` in a forked child: ``"ok:<what it returned>"``, or
    ``"<exception class>:<message>"`` for what it raised."""

    def report(queue: Any) -> None:
        try:
            result = f"ok:{function()}"
        except Exception as exc:
            result = f"{type(exc).__name__}:{exc}"
        queue.put(result)

    with Children() as children:
        children.start(report, children.queue)
        (result,) = children.results()
    return result


def page_permissions(*codenames: str) -> Any:
    """The permissions of the admin's pages (``view_decode``, ``view_status``), to give a
    staff user who is no superuser."""
    from django.contrib.auth.models import Permission

    return Permission.objects.filter(
        content_type__app_label="django_snowid", codename__in=codenames
    )


#: The example shop (``example_project/``).
PROJECT = ROOT / "example_project"


def manage(*args: str, db: Path, redis_url: str = "") -> subprocess.CompletedProcess[str]:
    """``manage.py`` of the example shop, on the SQLite file ``db`` (Redis: ``redis_url``)."""
    env = {
        **os.environ,
        "SHOP_DB_PATH": str(db),
        "PYTHONPATH": str(PROJECT.parent),
        "DJANGO_SETTINGS_MODULE": "shop_site.settings",
    }
    env.pop("SHOP_REDIS_URL", None)
    if redis_url:
        env["SHOP_REDIS_URL"] = redis_url
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def project(tmp_path: Path, *, apps: list[str], models: str, extra: str = "") -> Path:
    """A project in ``tmp_path`` (its SQLite file too): settings ``mysite`` (``extra`` appended)
    and an app ``shop`` with ``models``; ``manage_project`` runs its commands."""
    shop = tmp_path / "shop"
    (shop / "migrations").mkdir(parents=True)
    (shop / "__init__.py").write_text("")
    (shop / "migrations" / "__init__.py").write_text("")
    (shop / "models.py").write_text(models)
    db = str(tmp_path / "db.sqlite3")
    settings = f"""
        SECRET_KEY = "not secret"
        INSTALLED_APPS = {["django.contrib.auth", "django.contrib.contenttypes", *apps]!r}
        DATABASES = {{"default": {{"ENGINE": "django.db.backends.sqlite3", "NAME": {db!r}}}}}
        DEFAULT_AUTO_FIELD = "django_snowid.fields.SnowflakeAutoField"
        USE_TZ = True
    """
    (tmp_path / "mysite.py").write_text(textwrap.dedent(settings) + textwrap.dedent(extra))
    return tmp_path


def manage_project(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m django *args`` in a project of :func:`project`, in a process of its own."""
    path = os.pathsep.join([str(project), str(ROOT)])
    result: subprocess.CompletedProcess[str] = _django(
        args, {"DJANGO_SETTINGS_MODULE": "mysite", "PYTHONPATH": path}, project
    )
    return result


@contextlib.contextmanager
def adopted(model: Any, first_id: int) -> Any:
    """``model`` switched to Snowflake ids by ``snowid_adopt``: its ids below ``first_id``
    are legacy ids (its row of the adoption journal, for the test's transaction)."""
    from django.utils import timezone

    from django_snowid.adopt import journal
    from django_snowid.models import IdAdoption

    label = model._meta.label
    IdAdoption.objects.create(
        label=label,
        table="t",
        column="id",
        first_id=first_id,
        state="done",
        started_at=timezone.now(),
    )
    journal.forget()
    try:
        yield
    finally:
        journal.forget()
