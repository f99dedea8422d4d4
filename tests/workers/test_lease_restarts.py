"""A worker-id holder killed before its store's record caught up with what it issued, or
stopped gracefully, and a process that takes its worker id right after: on every source.

The holder runs without a heartbeat, so that it dies before its first one, as a process
killed in its first seconds does with the default time-to-live (the first heartbeat comes
after a third of it: 10 s). The restarted process's clock is injected, behind.
"""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest
from django.db import connections

from django_snowid.core.layout import PRESETS
from django_snowid.exceptions import WorkerIdError
from django_snowid.workers.lease import release_all
from django_snowid.workers.leased import lease_generator, lease_of
from tests.support import LEASE_TTL_S, Children

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CLASSIC = PRESETS["classic"]
TTL_S = LEASE_TTL_S
SOURCES = [pytest.param("redis", marks=pytest.mark.redis), "database", "slot"]


def _issue_to_file(source: str, path: str, ready) -> None:
    generator = lease_generator(CLASSIC, 0, source, heartbeat=False)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, f"{generator.next_id()}\n".encode())
    ready.set()
    while True:  # until SIGKILL; every batch reaches the file before the next
        os.write(fd, "".join(f"{i}\n" for i in generator.next_ids(50)).encode())


def _kill_a_holder(source: str, issued_path: str) -> set[int]:
    """A real process takes worker id 0, issues ids for half a second (before its first
    heartbeat, before it fences itself) and is killed with SIGKILL; the ids it issued."""
    with Children() as children:
        children.kill_when_running(_issue_to_file, source, issued_path, after_s=0.5)
    with open(issued_path) as file:
        issued = {int(line) for line in file if line.strip()}
    assert CLASSIC.decode(max(issued)).node == 0
    return issued


def behind(ms: int):
    return lambda: time.time_ns() - ms * 1_000_000


@pytest.mark.parametrize("source", SOURCES, indirect=True)
@pytest.mark.parametrize("behind_ms", [3000, 1000])
def test_killed_holder_restarted_at_once_with_its_clock_behind_repeats_no_id(
    source, behind_ms, tmp_path
):
    before = _kill_a_holder(source, str(tmp_path / "issued"))
    # The restart asks at once. A store that hands a dead holder's id over at once (a lock
    # file) gives it worker id 0; one that holds it until its record expires gives it
    # another id, which it gives back, and asks again until it gets worker id 0.
    deadline = time.monotonic() + 10 * TTL_S
    while True:
        try:
            generator = lease_generator(CLASSIC, 0, source, clock=behind(behind_ms))
        except WorkerIdError as exc:  # a refusal of ours, naming the cause
            assert behind_ms > 2000, f"a clock {behind_ms} ms behind waits: {exc}"
            assert "ahead of this host's clock" in str(exc), exc
            return
        if generator.node == 0:
            break
        lease_of(generator).release()  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "worker id 0 was never handed out again"
        time.sleep(0.05)
    newest = max(before)
    while True:  # until past the dead holder's newest id
        batch = generator.next_ids(200)
        repeated = before.intersection(batch)
        assert not repeated, f"ids issued twice, {len(repeated)} in a batch of 200"
        if batch[-1] > newest:
            break


def _issue_then_stop(source: str, stopped) -> None:
    generator = lease_generator(CLASSIC, 0, source)
    deadline = time.monotonic() + TTL_S / 3 + 0.3  # past the first heartbeat
    while time.monotonic() < deadline:
        generator.next_ids(50)
    release_all()  # what the atexit hook does at a graceful exit
    connections.close_all()
    stopped.set()


@pytest.mark.parametrize("source", SOURCES, indirect=True)
def test_restart_after_a_graceful_stop_takes_the_same_id_without_waiting(source):
    """A deploy restarts a process: the new one gets the worker id the old one gave back,
    and waits for no horizon beyond the last tick the old one really used."""
    connections.close_all()
    context = multiprocessing.get_context("fork")
    stopped = context.Event()
    holder = context.Process(target=_issue_then_stop, args=(source, stopped))
    holder.start()
    assert stopped.wait(30)
    holder.join(10)
    slept: list[float] = []
    generator = lease_generator(CLASSIC, 0, source, sleep=slept.append, heartbeat=False)
    assert generator.node == 0
    assert sum(slept) <= CLASSIC.time_unit_ms / 1000, f"waited {sum(slept):.3f} s"
