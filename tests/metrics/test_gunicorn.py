"""Metrics under gunicorn, prometheus_client's multiprocess mode: four sync workers,
recycled every few requests, issue ids and sequence values; a scrape through the view of
docs/operations.rst counts every one of them.

The gunicorn configuration and the view are the blocks of docs/operations.rst, run as
they are written there.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from tests.project.test_docs_examples import DOCS, parse_rst
from tests.support import ROOT, free_port

WORKERS = 4
MAX_REQUESTS = 25  # each worker is replaced after this many requests

pytestmark = pytest.mark.slow


def documented(caption: str, containing: str) -> str:
    """The block of docs/operations.rst with this caption that contains ``containing``."""
    (block,) = [
        b
        for b in parse_rst(DOCS / "operations.rst").blocks
        if b.caption == caption and containing in b.text
    ]
    return block.text


def get(port: int, path: str) -> str:
    """The body of ``GET path``, read until gunicorn closes the connection: a sync
    worker closes it once the request has ended (``request_finished`` has run)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200") or head.startswith(b"HTTP/1.1 200"), head
    return body.decode()


def wait_until_serving(port: int, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert server.poll() is None, log.read_text()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"gunicorn did not start:\n{log.read_text()}")


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.fixture
def site(tmp_path):
    """tests.gunicorn_site in multiprocess mode, migrated: the environment of its processes,
    and the directory of their metrics files."""
    prometheus_dir = tmp_path / "prometheus"
    prometheus_dir.mkdir()
    (tmp_path / "gunicorn.conf.py").write_text(documented("gunicorn.conf.py", "child_exit"))
    (tmp_path / "docs_example_views.py").write_text(
        documented("shop/views.py", "MultiProcessCollector")
    )
    env = {
        **{k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
        "DJANGO_SETTINGS_MODULE": "tests.gunicorn_site",
        "SNOWID_SITE_DB": str(tmp_path / "site.sqlite3"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)]),
        "PROMETHEUS_MULTIPROC_DIR": str(prometheus_dir),
    }
    migrate = [sys.executable, "-m", "django", "migrate", "-v", "0"]
    subprocess.run(migrate, env=env, check=True, cwd=tmp_path, timeout=120)
    return env, prometheus_dir


@pytest.fixture(params=[False, True], ids=["app-per-worker", "preload"])
def gunicorn(request, site, tmp_path):
    """A gunicorn of four workers serving the site, with the documented configuration:
    each worker loads Django, or the arbiter does before forking them (``--preload``)."""
    env, _ = site
    port = free_port()
    log = tmp_path / "gunicorn.log"
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "django.core.wsgi:get_wsgi_application()",
        "-c",
        str(tmp_path / "gunicorn.conf.py"),
        "--workers",
        str(WORKERS),
        "--max-requests",
        str(MAX_REQUESTS),
        "--bind",
        f"127.0.0.1:{port}",
        *(["--preload"] if request.param else []),
    ]
    with open(log, "wb") as out:
        server = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=out, stderr=out)
    try:
        wait_until_serving(port, server, log)
        yield port, server, log
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


def test_counters_are_exact_across_workers(gunicorn):
    port, server, log = gunicorn
    paths = ["/ids/5/"] * 80 + ["/ids/1/"] + ["/ticket/"] * 40  # 401 ids, 40 values
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda path: get(port, path), paths))
    pids = {answer.split()[0] for answer in answers}
    assert len(pids) > WORKERS  # recycled workers served too
    ids = [int(n) for answer in answers[:81] for n in answer.split()[1:]]
    assert len(set(ids)) == 401
    scraped = samples(get(port, "/metrics"))
    assert (
        scraped.get(("snowid_ids_issued_total", (("layout", "default"), ("store", "database"))))
        == 401
    )
    assert (
        scraped.get(
            ("snowid_sequence_values_issued_total", (("sequence", "ticket"), ("store", "database")))
        )
        == 40
    )
    assert server.poll() is None, log.read_text()


def test_work_outside_requests_reaches_the_files_at_exit(site, tmp_path):
    """A process that serves no request (a command, a job) writes its counts when it exits."""
    env, prometheus_dir = site
    code = "import django; django.setup(); import django_snowid; django_snowid.next_ids(9)"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=tmp_path, timeout=120)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(prometheus_dir))
    labels = {"layout": "default", "store": "database"}
    assert registry.get_sample_value("snowid_ids_issued_total", labels) == 9
