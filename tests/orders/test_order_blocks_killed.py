"""Processes killed with blocks in flight, and the store flushed or restarted empty after:
no position is ever issued twice, and the numbers issued after are past every block that
was handed out, used or not."""

from __future__ import annotations

import os
import signal
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.test import override_settings

from django_snowid.orders.stores import get_store
from tests.support import Children, set_order_state
from tests.testapp.models import ShopOrder

KILLED = 4
AFTER = 4
PER_CHILD_AFTER = 2000


def _issue_until_killed(directory: str, process: int, ready: Any) -> None:
    """Issue numbers with short pauses, logging each block and number as it comes (one
    line, written at once: a SIGKILL loses nothing logged)."""
    field = ShopOrder._meta.get_field("number")
    issuer = field.issuer()
    blocks = issuer._blocks
    assert blocks is not None
    hold = blocks.hold
    log = Path(directory, f"killed-{process}.log").open("a", buffering=1)  # noqa: SIM115 (open until killed)

    def logged(block: Any, sent: float) -> tuple[int, int]:
        log.write(f"B {block.local_second} {block.first_sequence} {block.count}\n")
        return hold(block, sent)

    blocks.hold = logged  # type: ignore[method-assign]
    serial = 0
    while True:
        second, sequence = field.format.position(issuer.next_number(process))
        log.write(f"N {second} {sequence}\n")
        serial += 1
        if serial == 200:
            ready.set()
        if serial % 50 == 0:
            time.sleep(0.001)


def _issue_after(process: int, queue: Any) -> None:
    field = ShopOrder._meta.get_field("number")
    issuer = field.issuer()
    try:
        queue.put(
            [field.format.position(issuer.next_number(process)) for _ in range(PER_CHILD_AFTER)]
        )
    except Exception as exc:  # reported to the parent, which fails the test
        queue.put(repr(exc))
    finally:
        connections.close_all()


def _read_logs(directory: Path) -> tuple[list[tuple[int, int]], list[tuple[int, int, int]]]:
    numbers, blocks = [], []
    for path in directory.glob("killed-*.log"):
        for line in path.read_text().splitlines():
            kind, *values = line.split()
            if len(values) == 2 and kind == "N":
                numbers.append((int(values[0]), int(values[1])))
            elif len(values) == 3 and kind == "B":
                blocks.append((int(values[0]), int(values[1]), int(values[2])))
    return numbers, blocks


def _run(tmp_path: Path, disaster: str, server: Any) -> None:
    field = ShopOrder._meta.get_field("number")
    # The stream just behind the clock: a new stream's first second is ahead of it (one
    # number a call there).
    set_order_state(field.stream, (field.format.local_second(datetime.now(timezone.utc)) - 1, 0))
    connections.close_all()
    with Children() as children:
        readies = []
        for process in range(KILLED):
            ready = children.context.Event()
            children.start(_issue_until_killed, str(tmp_path), process, ready)
            readies.append(ready)
        assert all(ready.wait(30) for ready in readies), "a child never got going"
        time.sleep(0.3)
        for child in children.processes:
            os.kill(child.pid, signal.SIGKILL)
        for child in children.processes:
            child.join()
    before, blocks = _read_logs(tmp_path)
    assert len(before) >= KILLED * 200 and len(blocks) < len(before) / 10  # blocks in use
    held = get_store().read(field.stream)
    # The store is past every block handed out, used or not.
    assert held is not None and held >= max((s, f + c - 1) for s, f, c in blocks)
    if disaster == "flushall":
        server.client().flushall()
    elif disaster == "restart":
        server.restart()
    with Children() as children:
        for process in range(AFTER):
            children.start(_issue_after, 100 + process, children.queue)
        replies = children.results()
    failed = [r for r in replies if isinstance(r, str)]
    assert not failed, failed
    after = [p for reply in replies for p in reply]
    everything = before + after
    assert len(set(everything)) == len(everything), "a position was issued twice"
    in_blocks = {(s, f + i) for s, f, c in blocks for i in range(c)}
    assert not in_blocks & set(after), "a number of a killed process's block was issued again"


@pytest.mark.slow
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("disaster", ["none", "flushall", "restart"])
def test_redis_processes_killed_with_blocks_in_flight(throwaway_redis, tmp_path, disaster):
    with override_settings(CACHES=throwaway_redis.caches(), SNOWID_ORDER_BACKEND="redis"):
        _run(tmp_path, disaster, throwaway_redis)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_database_processes_killed_with_blocks_in_flight(tmp_path, settings):
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        pytest.skip("SQLite: a killed writer may leave the database locked for a while")
    with override_settings(SNOWID_ORDER_BACKEND="database"):
        _run(tmp_path, "none", None)
