"""Redis topologies a test starts for itself: a 3-primary Redis Cluster (with a replica
for each primary, when a test kills one), and a primary with a replica under three
Sentinels. Every server listens on a free loopback port, keeps
nothing on disk, and is stopped by its pid (never the shared Redis on 6379).

``SNOWID_REDIS_CLIENT_FACTORY = "tests.redis_topologies.current_client"`` hands our Redis
features a client of the topology a test made current (forked children inherit it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

from tests.support import Children, free_port, redis_server_command

#: The topology ``current_client`` serves (set by a test before it forks).
CURRENT: Any = None


def current_client() -> Any:
    """A new redis-py client of the current topology (a ``RedisCluster`` for a cluster)."""
    return CURRENT.client()


#: Ports ``cluster_port`` has handed out in this process: never twice, so that the servers
#: of one cluster cannot be given the same port before any of them has bound it.
_CLUSTER_PORTS: set[int] = set()


def cluster_port() -> int:
    """A free port whose cluster bus port (``port + 10000``) is free too; both below the
    range the kernel picks ports from (for port 0 and for outgoing connections), where no
    client socket can take the bus port between this check and the server's bind."""
    import random
    import socket

    with open("/proc/sys/net/ipv4/ip_local_port_range") as ports:
        ephemeral = int(ports.read().split()[0])  # 32768 by default
    bus_low = max(11024, ephemeral - 2768)
    while True:
        port = random.randrange(bus_low - 10000, ephemeral - 10000)
        if port in _CLUSTER_PORTS:
            continue
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 10000))
        except OSError:
            continue
        _CLUSTER_PORTS.add(port)
        return port


class ServerExited(Exception):
    """A server of a topology exited while it was awaited."""


def _wait(what: str, ready: Any, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = ready()
            if result:
                return result
        except ServerExited:
            raise
        except Exception:
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not ready after {timeout} s")
        time.sleep(0.05)


class Server:
    """One redis-server (or Sentinel) process of a topology."""

    def __init__(self, workdir: str, *args: str, sentinel_conf: str | None = None) -> None:
        self.port = cluster_port() if "--cluster-enabled" in args else free_port()
        self.workdir = workdir
        self.args = args
        self.sentinel_conf = sentinel_conf
        self.process: subprocess.Popen[bytes] | None = None

    def client(self, **kwargs: Any) -> Any:
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5, **kwargs)

    def start(self) -> None:
        for attempt in range(3):
            self.process = subprocess.Popen(
                self._command(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                _wait(f"redis on {self.port}", self._answers)
                return
            except ServerExited:
                # The port was taken between our check and its bind: another port.
                if attempt == 2:
                    raise
                self.port = cluster_port() if "--cluster-enabled" in self.args else free_port()

    def _command(self) -> list[str]:
        if self.sentinel_conf is None:
            return redis_server_command(self.port, self.workdir, *self.args)
        path = os.path.join(self.workdir, f"sentinel-{self.port}.conf")
        with open(path, "w") as conf:
            conf.write(f"port {self.port}\nbind 127.0.0.1\ndir {self.workdir}\n")
            conf.write(self.sentinel_conf)
        binary = shutil.which("redis-sentinel")
        return [binary, path] if binary else ["redis-server", path, "--sentinel"]

    def _answers(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:  # it could not bind its port: no use waiting
            raise ServerExited(f"redis on {self.port} exited with {self.process.returncode}")
        return bool(self.client().ping())

    def kill(self, sig: int = signal.SIGTERM) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, sig)
            self.process.wait(timeout=10)
        self.process = None


class Writers(Children):
    """``count`` forked processes running ``target(event, results, n)``; ``event`` tells
    them something happened (or, at the end, to stop), ``results`` collects one reply each.
    """

    def __init__(self, target: Any, count: int) -> None:
        super().__init__()
        self.event = self.stop
        self._target, self._count = target, count

    def __enter__(self) -> Writers:
        for n in range(self._count):
            self.start(self._target, self.event, self.queue, n)
        return self


def until_after(
    event: Any, seconds: float, work: Any, *, pause: float = 0.0
) -> tuple[list[Any], int, list[str]]:
    """A writer's loop: call ``work()`` (``pause`` s apart) until ``seconds`` after
    ``event`` is set. Returns what it returned, how many of those calls came after the
    event, and the error that stopped it, if one did (every error is a failure here)."""
    made: list[Any] = []
    after = 0
    errors: list[str] = []
    deadline = None
    while deadline is None or time.monotonic() < deadline:
        if deadline is None and event.is_set():
            deadline = time.monotonic() + seconds
        try:
            made.append(work())
        except Exception as exc:
            errors.append(repr(exc))
            break
        after += deadline is not None
        time.sleep(pause)
    return made, after, errors


class Topology:
    servers: list[Server]

    def stop(self) -> None:
        for server in self.servers:
            server.kill()

    def __enter__(self) -> Topology:
        global CURRENT
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        CURRENT = self
        return self

    def __exit__(self, *exc: object) -> None:
        global CURRENT
        CURRENT = None
        self.stop()

    def start(self) -> None:
        raise NotImplementedError

    def client(self) -> Any:
        raise NotImplementedError


class Cluster(Topology):
    """Three primaries, every slot covered; with ``replicas=1`` each primary has a replica,
    which the cluster itself promotes when its primary fails (``kill_primary_of``)."""

    def __init__(self, workdir: str, replicas: int = 0) -> None:
        self.replicas = replicas
        self.servers = [
            Server(
                workdir,
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                f"nodes-{i}-{os.getpid()}.conf",
                # A primary is failed after this long without an answer: short, so that a
                # test's failover takes a few seconds.
                "--cluster-node-timeout",
                "1000" if replicas else "2000",
                "--repl-diskless-sync-delay",
                "0",
            )
            for i in range(3 * (1 + replicas))
        ]

    def start(self) -> None:
        for server in self.servers:
            server.start()
        addresses = [f"127.0.0.1:{s.port}" for s in self.servers]
        subprocess.run(
            ["redis-cli", "--cluster", "create", *addresses, "--cluster-yes",
             "--cluster-replicas", str(self.replicas)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=30,
        )  # fmt: skip
        for server in self.servers:
            _wait("cluster state ok", lambda s=server: self._state_ok(s))
            if self.replicas:
                _wait("every replica in sync", lambda s=server: self._synced(s))

    @staticmethod
    def _state_ok(server: Server) -> bool:
        return b"cluster_state:ok" in server.client().execute_command("CLUSTER", "INFO")

    @staticmethod
    def _synced(server: Server) -> bool:
        info = server.client().info("replication")
        return info["role"] == "master" or info.get("master_link_status") == "up"

    def live(self) -> Server:
        return next(s for s in self.servers if s.process is not None)

    def kill_primary_of(self, key: str, timeout: float = 20.0) -> tuple[float, float]:
        """SIGKILL the primary that serves ``key`` and wait until the cluster promoted its
        replica and reports itself whole again: (killed_at, promoted_at), monotonic."""
        slot = self.client().keyslot(key)
        primary = self.owner(slot)
        killed_at = time.monotonic()
        primary.kill(signal.SIGKILL)
        while True:
            assert time.monotonic() < killed_at + timeout, f"no promotion within {timeout:g} s"
            with contextlib.suppress(Exception):
                owner = self.owner(slot)
                if owner is not primary and self._state_ok(owner):
                    return killed_at, time.monotonic()
            time.sleep(0.05)

    def client(self) -> Any:
        from redis.cluster import ClusterNode, RedisCluster

        return RedisCluster(
            startup_nodes=[ClusterNode("127.0.0.1", s.port) for s in self.servers],
            socket_timeout=5,
            socket_connect_timeout=5,
        )

    def node_id(self, server: Server) -> str:
        return server.client().execute_command("CLUSTER", "MYID").decode()

    def owner(self, slot: int) -> Server:
        """The server that serves ``slot`` now (as a live server sees it)."""
        for start, end, primary, *_ in self.live().client().execute_command("CLUSTER", "SLOTS"):
            if start <= slot <= end:
                return next(s for s in self.servers if s.port == int(primary[1]))
        raise LookupError(f"no node serves slot {slot}")

    def migrate_while_writing(
        self, key: str, target: Any, count: int, *, after: float
    ) -> tuple[int, Server, Server, list[Any]]:
        """``count`` :class:`Writers` running ``target``; ``after`` seconds in, the slot of
        ``key`` moves (their event says when). The slot, its two owners, their replies."""
        with Writers(target, count) as writers:
            time.sleep(after)
            slot, source, destination = self.migrate_slot_of(key)
            writers.event.set()  # migrated
            return slot, source, destination, writers.results()

    def migrate_slot_of(self, key: str) -> tuple[int, Server, Server]:
        """Move the slot of ``key`` to another primary: (slot, source, target)."""
        slot = self.client().keyslot(key)
        source = self.owner(slot)
        target = next(s for s in self.servers if s is not source)
        self.migrate_slot(slot, target)
        return slot, source, target

    def migrate_slot(self, slot: int, target: Server, hold_s: float = 0.3) -> None:
        """Move ``slot`` to ``target`` the way ``redis-cli --cluster reshard`` does, holding
        each state for ``hold_s``: MIGRATING/IMPORTING (keys still at the source), keys
        moved (the source answers ASK), then the slot assigned (everyone answers MOVED)."""
        source = self.owner(slot)
        src, dst = source.client(), target.client()
        dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", self.node_id(source))
        src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", self.node_id(target))
        time.sleep(hold_s)
        while keys := src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100):
            src.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *keys)
        time.sleep(hold_s)
        others = [s for s in self.servers if s not in (target, source)]
        for server in (target, source, *others):
            server.client().execute_command(
                "CLUSTER", "SETSLOT", slot, "NODE", self.node_id(target)
            )


class SentinelGroup(Topology):
    """A primary, one replica, and three Sentinels that fail over within about a second."""

    SERVICE = "snowtest"

    def __init__(self, workdir: str) -> None:
        # A full sync starts at once (the default waits 5 s for more replicas).
        self.primary = Server(workdir, "--repl-diskless-sync-delay", "0")
        # A name of its own: django-redis keeps its connection pools in a process-wide dict
        # keyed by the URL, so a group of another test named alike would get this one's
        # pool, whose Sentinels are gone.
        self.SERVICE = f"snowtest-{self.primary.port}"
        self.replica = Server(workdir)
        self.workdir = workdir
        self.sentinels: list[Server] = []
        self.servers = [self.primary, self.replica]

    def start(self) -> None:
        self.primary.start()
        self.replica.args = (
            "--repl-diskless-sync-delay",
            "0",
            "--replicaof",
            "127.0.0.1",
            str(self.primary.port),
        )
        self.replica.start()
        _wait(
            "replica in sync",
            lambda: self.replica.client().info("replication")["master_link_status"] == "up",
        )
        conf = (
            f"sentinel monitor {self.SERVICE} 127.0.0.1 {self.primary.port} 2\n"
            f"sentinel down-after-milliseconds {self.SERVICE} 1000\n"
            f"sentinel failover-timeout {self.SERVICE} 5000\n"
        )
        self.sentinels = [Server(self.workdir, sentinel_conf=conf) for _ in range(3)]
        self.servers += self.sentinels
        for sentinel in self.sentinels:
            sentinel.start()
        # Each Sentinel knows the others (through the primary's hello channel) and the replica.
        _wait(
            "sentinels see each other and the replica",
            lambda: all(
                int(s.client().sentinel_master(self.SERVICE)["num-other-sentinels"]) == 2
                and int(s.client().sentinel_master(self.SERVICE)["num-slaves"]) == 1
                for s in self.sentinels
            ),
        )

    def kill_primary(self, timeout: float = 15.0) -> tuple[float, float]:
        """SIGKILL the primary and wait for the Sentinels to promote the replica:
        (killed_at, promoted_at), monotonic."""
        old = self.primary_port()
        killed_at = time.monotonic()
        self.primary.kill(signal.SIGKILL)
        while self.primary_port() == old:
            assert time.monotonic() < killed_at + timeout, f"no promotion within {timeout:g} s"
            time.sleep(0.05)
        return killed_at, time.monotonic()

    def primary_port(self) -> int:
        _host, port = self.sentinels[0].client().sentinel_get_master_addr_by_name(self.SERVICE)
        return int(port)

    def caches(self) -> dict[str, Any]:
        """CACHES with the ``snowid`` alias on django-redis's SentinelConnectionFactory."""
        return {
            "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
            "snowid": {
                "BACKEND": "django_redis.cache.RedisCache",
                "LOCATION": f"redis://{self.SERVICE}/0",
                "OPTIONS": {
                    "CLIENT_CLASS": "django_redis.client.SentinelClient",
                    "CONNECTION_FACTORY": "django_redis.pool.SentinelConnectionFactory",
                    "SENTINELS": [("127.0.0.1", s.port) for s in self.sentinels],
                    "SOCKET_CONNECT_TIMEOUT": 0.5,
                    "SOCKET_TIMEOUT": 0.5,
                },
            },
        }

    def client(self) -> Any:
        from django_redis import get_redis_connection

        return get_redis_connection("snowid")


#: The topologies whose primary a failover test kills under load.
FAILOVERS = ["sentinel", "cluster"]


@contextlib.contextmanager
def failover_topology(
    kind: str, workdir: str
) -> Iterator[tuple[dict[str, Any], Callable[[str], tuple[float, float]]]]:
    """A topology a test kills a primary of: (the settings that point our Redis parts at
    it, ``kill(key)``), ``kill`` SIGKILLing the primary that serves ``key`` and returning
    (killed_at, promoted_at). ``sentinel``: the Sentinels promote the replica (the
    django-redis Sentinel cache). ``cluster``: the cluster promotes the replica of that
    key's primary (``SNOWID_REDIS_CLIENT_FACTORY`` hands out a ``RedisCluster``)."""
    if kind == "sentinel":
        with SentinelGroup(workdir) as group:
            yield {"CACHES": group.caches()}, lambda key: group.kill_primary()
    else:
        with Cluster(workdir, replicas=1) as cluster:
            factory = "tests.redis_topologies.current_client"
            yield {"SNOWID_REDIS_CLIENT_FACTORY": factory}, cluster.kill_primary_of
