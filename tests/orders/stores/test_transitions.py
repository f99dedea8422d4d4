"""Every order store runs the stream's transitions as the pure core does.

The traces of ``tests/order_transitions.py`` (numbers, bulks, blocks, clock moves both
ways, restarts, lost states, recoveries) go through the core, the Redis store's scripts
(on the shared Redis, under the test's key prefix) and the database store's statements
(on the database SNOWID_TEST_DB names), move by move: the same answers, the same states.
"""

from __future__ import annotations

from typing import Any

import pytest

from django_snowid.models import OrderStreamState
from django_snowid.orders.stores.base import Position, RecoverArgs, ReserveArgs
from django_snowid.orders.stores.database import DatabaseOrderStore
from tests.order_transitions import Clock, CoreStream, Run, agree, trace

# Seeded: the same traces on every run. Enough to reach every branch of the core (each
# answer, each kind of recovery) in a few seconds on the slowest database.
TRACES = [trace(seed) for seed in range(40)]


def test_the_core_hands_out_no_position_twice():
    """The reference itself: through restarts, lost states, recoveries and clocks stepped
    back, no position is handed out twice; and the traces reach every answer."""
    answers: set[str] = set()
    for each in TRACES:
        for holds in (False, True):
            clock = Clock(each.start_ms)
            run = Run(each, CoreStream(clock, holds), clock)
            for move in each.moves:
                answer, _ = run.play(move)
                answers.add(type(answer).__name__)
            assert len(run.issued) == len(set(run.issued)), each.seed
    assert answers >= {"Reserved", "Block", "SecondFull", "ClockBehind", "Resuming", "Missing"}


class _Stream:
    """What both stores share: one stream of ``store``, which :meth:`restart` rebuilds."""

    def __init__(self, clock: Clock, name: str) -> None:
        self.clock, self.name = clock, name
        self.store: Any = self._new()

    def _new(self) -> Any:
        raise NotImplementedError

    def reserve(self, args: ReserveArgs) -> Any:
        return self.store.reserve(self.name, args)

    def reserve_block(self, args: ReserveArgs) -> Any:
        return self.store.reserve_block(self.name, args)

    def recover(self, database: Position | None, args: RecoverArgs) -> Any:
        return self.store.recover(self.name, database, args)

    def restart(self) -> None:
        self.store = self._new()

    def read(self) -> Position | None:
        return self.store.read(self.name)


class _RedisStream(_Stream):
    def _new(self) -> Any:
        from django_snowid.orders.stores.redis import RedisOrderStore

        store = RedisOrderStore.configured()
        store.clock = self.clock
        return store

    def lose(self) -> None:
        self.store.client().delete(self.store.key(self.name))


class _DatabaseStream(_Stream):
    def _new(self) -> Any:
        return DatabaseOrderStore(clock=self.clock)

    def lose(self) -> None:
        OrderStreamState.objects.filter(name=self.name).delete()


@pytest.mark.redis
def test_the_redis_scripts_run_the_transitions_as_core():
    for each in TRACES:
        agree(each, lambda clock, n=each.seed: _RedisStream(clock, f"t{n}"), holds=True)


@pytest.mark.django_db(transaction=True)
def test_the_database_statements_run_the_transitions_as_core():
    for each in TRACES:
        agree(each, lambda clock, n=each.seed: _DatabaseStream(clock, f"t{n}"), holds=False)
