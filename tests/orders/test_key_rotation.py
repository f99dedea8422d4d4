"""A key rotation during a rolling deploy: processes with the old ``SNOWID_ORDER_KEY`` and
processes with the new schedule save concealed orders into one table at once, with
blocks, on each store, on a clock the test moves second by second (every process reads
it: the store's clock, the blocks' deadlines).

Whatever the deploy order, no second is concealed with two keys: the processes that would
are refused (``OrderKeyConflict``) before they issue, and every stored number decodes to
its true position with the settings the deploy ends with."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from django.db import connections
from django.test import override_settings

from django_snowid.orders.formats import build_format
from django_snowid.orders.stores import get_store
from tests.support import Children, set_order_state
from tests.testapp.models import ShopOrder

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

OLD_KEY = "the-key-of-the-shop-before-its-rotation-0001"
NEW_KEY = "the-key-of-the-shop-after-its-rotation-00002"
#: The second the new key is valid from (UTC: local seconds are Unix seconds).
T = int(datetime(2030, 1, 1, 0, 0, 10, tzinfo=timezone.utc).timestamp())
PER_STEP = 12  # orders a process saves in each second the test steps to (and a bulk of 4)


def schedule(valid_from: int) -> list[tuple[str, str]]:
    moment = datetime.fromtimestamp(valid_from, timezone.utc).isoformat()
    return [("2020-01-01T00:00:00+00:00", OLD_KEY), (moment, NEW_KEY)]


def _ready(clock: Any, waited: list[float]) -> Any:
    """This process's issuer of ShopOrder numbers on the test's clock; its waits move this
    process's clock on (``waited``), as time would pass for it."""

    def now() -> float:
        return clock.value + waited[0]

    def sleep(seconds: float) -> None:
        waited[0] += seconds

    get_store().clock = now  # type: ignore[attr-defined]
    issuer = ShopOrder._meta.get_field("number").issuer()
    blocks = issuer._blocks
    assert blocks is not None  # blocks on: the default SNOWID_ORDER_BLOCK_MAX
    blocks.monotonic = blocks.wall = now
    issuer.sleep = sleep
    return issuer


def _save(process: int) -> list[tuple[int, tuple[int, int]]]:
    """PER_STEP orders one by one, then 4 in a bulk: (number, true position) each, as this
    process's own settings decode it."""
    fmt = ShopOrder._meta.get_field("number").format
    orders = [ShopOrder.objects.create(user_id=process) for _ in range(PER_STEP)]
    orders += ShopOrder.objects.bulk_create([ShopOrder(user_id=process) for _ in range(4)])
    return [(order.number, fmt.position(order.number)) for order in orders]


def _process(role: str, keys: Any, clock: Any, go: Any, done: Any, results: Any, n: int) -> None:
    """Save orders at each step with the key setting ``keys(role)`` names for it (None:
    idle this step); report what was saved and what was refused."""
    saved: list[tuple[int, tuple[int, int]]] = []
    refused: list[tuple[int, str]] = []
    current: Any = object()
    stack: Any = None
    waited = [0.0]
    try:
        while True:
            go.wait()
            if clock.value < 0:
                break
            waited[0] = 0.0
            key = keys(role)
            if key != current:  # a deploy: new settings, a new issuer
                if stack is not None:
                    stack.disable()
                stack = override_settings(SNOWID_ORDER_CONCEAL=True, SNOWID_ORDER_KEY=key)
                stack.enable()
                current = key
                if key is not None:
                    _ready(clock, waited)
            if key is not None:
                try:
                    saved += _save(n)
                except Exception as exc:  # the test fails on any but OrderKeyConflict
                    refused.append((int(clock.value), f"{type(exc).__name__}: {exc}"))
                if waited[0]:
                    refused.append((int(clock.value), f"waited {waited[0]:.2f} s"))
            done.wait()
    finally:
        connections.close_all()
        results.put((role, saved, refused))


def _run(steps: list[tuple[int, int]], roles: list[str], keys: Any, phase: Any) -> list[Any]:
    """Each process of ``roles`` saves orders at every (second, phase) of ``steps``."""
    field = ShopOrder._meta.get_field("number")
    set_order_state(field.stream, (T - 10, 0))  # a stream this server wrote, before T
    connections.close_all()
    with Children() as children:
        clock = children.context.Value("d", 0.0)
        go = children.context.Barrier(len(roles) + 1)
        done = children.context.Barrier(len(roles) + 1)
        for n, role in enumerate(roles):
            children.start(_process, role, keys, clock, go, done, children.queue, n)
        for second, step_phase in steps:
            phase.value = step_phase
            clock.value = second + 0.25
            go.wait(timeout=60)
            done.wait(timeout=60)
        clock.value = -1.0
        go.wait(timeout=60)
        return children.results()


def _decoded_with(key: Any, reports: list[Any]) -> None:
    """Every saved number decodes to the true position its process gave it, with the
    settings ``key`` (the deploy's last), and no position is held twice."""
    with override_settings(SNOWID_ORDER_CONCEAL=True, SNOWID_ORDER_KEY=key):
        final = build_format()
        saved = [pair for _, pairs, _ in reports for pair in pairs]
        assert {n for n, _ in saved} == set(ShopOrder.objects.values_list("number", flat=True))
        positions = [final.position(number) for number, _ in saved]
        assert positions == [position for _, position in saved], "decoded to another position"
        assert len(set(positions)) == len(positions), "a position shown twice"


def test_a_new_key_valid_after_the_deploy_refuses_the_old_processes_from_its_second(backend):
    """Old and new processes issue from two seconds before ``valid_from`` to one after:
    the new ones announce the key before its second, so from that second on the old ones
    are refused, whichever process comes first."""
    phase = Children().context.Value("i", 0)
    keys = {"old": OLD_KEY, "new": schedule(T)}
    steps = [(second, 0) for second in range(T - 2, T + 2)]
    reports = _run(steps, ["old", "new", "old", "new"], lambda role: keys[role], phase)
    for role, saved, refused in reports:
        if role == "new":
            assert refused == [] and max(p for _, p in saved)[0] == T + 1
        else:
            assert [second for second, _ in refused] == [T, T + 1]
            assert max(p for _, p in saved)[0] == T - 1  # nothing at or after T
            assert "OrderKeyConflict" in refused[0][1]
            assert "this schedule does not hold key" in refused[0][1]
    _decoded_with(schedule(T), reports)


def test_a_new_key_deployed_after_its_valid_from_is_refused_until_it_is_moved(backend):
    """The old processes issue past ``valid_from`` before any new one starts: the new
    ones are refused (their key cannot take over the seconds already concealed with the
    old one), the old ones go on; moved after the deploy, the key takes over cleanly."""
    phase = Children().context.Value("i", 0)

    def keys(role: str) -> Any:
        if role == "old":
            return OLD_KEY
        return [None, schedule(T), schedule(T + 6)][phase.value]

    steps = [(T + 1, 0), (T + 2, 0), (T + 3, 1), (T + 4, 2), (T + 5, 2), (T + 6, 2), (T + 7, 2)]
    reports = _run(steps, ["old", "new", "old", "new"], keys, phase)
    for role, saved, refused in reports:
        # In the step of the late deploy, its first process's recovery reads the old
        # numbers with the new key: the stream resumes at the next second, and every
        # process waits for it (with a clock that moves, at most a second).
        waits = [second for second, what in refused if what.startswith("waited")]
        assert set(waits) <= {T + 3}
        refusals = [(second, what) for second, what in refused if not what.startswith("waited")]
        if role == "new":
            assert [second for second, _ in refusals] == [T + 3]
            assert "OrderKeyConflict" in refusals[0][1]
            assert "Set its valid_from after the end of the deploy" in refusals[0][1]
            assert min(p for _, p in saved)[0] == T + 4
        else:
            assert [second for second, _ in refusals] == [T + 6, T + 7]
            assert "OrderKeyConflict" in refusals[0][1]
            assert max(p for _, p in saved)[0] == T + 5
    _decoded_with(schedule(T + 6), reports)
