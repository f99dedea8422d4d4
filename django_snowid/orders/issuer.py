"""Issuing order numbers: one :class:`StreamIssuer` per stream and format, on a store."""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Iterator, Sequence
from functools import partial
from operator import add
from typing import Any

from .. import inventory, metrics
from ..conf import conf, on_settings_changed
from ..core.layout import iso_utc
from ..core.order_format import OrderNumberFormat
from ..core.order_stream import (
    ClockBehind,
    KeyConflict,
    OutsideWindow,
    Reserved,
    Resuming,
    SecondFull,
)
from ..exceptions import (
    OrderClockBehind,
    OrderNumberError,
    OrderNumberUnavailable,
    OrderSecondFull,
)
from .blocks import BlockIssuer
from .keys import StreamKeys
from .recovery import database_position, resume_past
from .stores import MISSING, ReserveArgs, get_store

__all__ = ["StreamIssuer", "block_sizes", "fields_of_stream", "get_issuer"]

DST_EXTRA_LEAD_S = 3600  # the repeated hour of a fall-back
# Recoveries in one call before the caller is told (a store flushed again and again).
MAX_RECOVERIES = 5

logger = logging.getLogger(__name__)


def fields_of_stream(stream: str) -> list[Any]:
    """The order-number fields of the installed models that share ``stream``."""
    return [field for field in inventory.order_fields() if field.stream == stream]


class _Retries:
    """What one call may still wait for and redo."""

    __slots__ = ("deadline", "recovered", "renewed")

    def __init__(self) -> None:
        self.deadline: float | None = None
        self.recovered = 0
        self.renewed = 0


class StreamIssuer:
    """Issues the numbers of one stream in this process."""

    def __init__(self, stream: str, fmt: OrderNumberFormat) -> None:
        self.stream = stream
        self.format = fmt
        self._utc = fmt.zone == "UTC"
        self._stem_cache: tuple[int, int] = (-1, 0)
        # Issuers are forgotten when a SNOWID_* setting changes: settings are read once here.
        self._store = get_store()
        self._cap = fmt.max_sequence
        self._shards = fmt.shard_count
        self._stem_factor = fmt._stem_factor
        self._seq_factor = fmt._seq_factor
        self._shown = fmt.shown_sequence if fmt.cipher is not None else None
        self._check = fmt.with_check_digit if fmt.check_digit else None
        self._keys = StreamKeys(stream, fmt)
        self._random_start = int(conf.ORDER_RANDOM_START)
        lead = int(conf.ORDER_MAX_BACKWARDS_S)
        self._max_lead = lead + DST_EXTRA_LEAD_S if conf.ORDER_ALLOW_DST else lead
        self._raise_when_full = conf.ORDER_WHEN_FULL == "raise"
        self._max_wait_s = conf.ORDER_MAX_WAIT_MS / 1000
        self._one = self._args_of_one()
        block_max = int(conf.ORDER_BLOCK_MAX)
        self._blocks = BlockIssuer(block_max) if block_max > 1 else None
        self._metrics = bool(conf.METRICS)
        #: Waits for the next second (tests give the store's clock and this together).
        self.sleep = time.sleep
        self._store_name = self._store.name
        self._issued = 0
        self._peak = 0

    def next_number(self, user: int = 0) -> int:
        """The next number of the stream, for a user of id ``user`` (its shard, the low bits
        or digits of ``user``, ends the number; a shard value is its own shard)."""
        shard = user % self._shards  # the format's shard_of_user(), without the call
        blocks = self._blocks
        if blocks is not None:
            position = blocks.take()
            if position is None and self._store.holds_blocks():
                position = blocks.reserve(self._offset(), self._reserve_block)
                if position is None:  # the store answered anything else than a block
                    return self._exact([shard])[0]
            if position is not None:
                return self._issue_one(position[0], position[1], shard)
            # A store that holds no block now (a transaction): one number, as without blocks.
        outcome = self._call(self._store.reserve, self._one or self._args(1))
        if type(outcome) is not Reserved:
            return self._exact([shard])[0]
        if blocks is not None:
            # Nothing of a block reserved before this number may come after it.
            blocks.passed((outcome.local_second, outcome.first_sequence))
        return self._issue_one(outcome.local_second, outcome.first_sequence, shard)

    def _issue_one(self, second: int, sequence: int, shard: int) -> int:
        if self._metrics:
            self._count(sequence, 1)
        return self._compose(second, sequence, shard)

    def _call(self, reserve: Any, args: ReserveArgs) -> Any:
        """``reserve(stream, args)``, its unreachability counted."""
        try:
            return reserve(self.stream, args)
        except OrderNumberUnavailable:
            self._unreachable()
            raise

    def _reserve_block(self, wanted: int) -> Any:
        return self._call(self._store.reserve_block, self._args(wanted))

    def block_size(self) -> int:
        """The size of this process's next block of the stream (1: one number a call)."""
        return 1 if self._blocks is None else self._blocks.size

    def _count(self, first_sequence: int, count: int) -> None:
        # Plain ints, no lock: a lost update under a race costs one count, never a number.
        self._issued += count
        last = first_sequence + count - 1
        if last > self._peak:
            self._peak = last

    def read_metrics(self) -> tuple[int, float]:
        """Numbers issued so far, and the largest fraction of a second's cap used since
        the last read."""
        peak, self._peak = self._peak, 0
        return self._issued, peak / self._cap

    def _unreachable(self) -> None:
        metrics.refused(
            logger,
            "orders",
            "store_unreachable",
            f"the order-number store {self._store_name!r} is unreachable; stream "
            f"{self.stream!r} issued nothing.",
        )

    def _offset(self) -> int:
        return 0 if self._utc else self.format.utc_offset_at(time.time())

    def _args(self, count: int) -> ReserveArgs:
        return ReserveArgs(
            offset=self._offset(),
            cap=self._cap,
            wanted=count,
            first_sequence=1 + random.randint(0, self._random_start) if self._random_start else 1,
            max_lead=self._max_lead,
            keys=self._keys.window,
        )

    def _args_of_one(self) -> ReserveArgs | None:
        return None if self._random_start or not self._utc else self._args(1)

    def _compose(self, local_second: int, sequence: int, shard: int) -> int:
        if self._shown is not None:
            sequence = self._shown(local_second, sequence)
        number = self._stem(local_second) * self._stem_factor + sequence * self._seq_factor + shard
        return number if self._check is None else self._check(number)

    def next_numbers(self, users: Sequence[int]) -> list[int]:
        """Numbers for the given users, increasing, in as few round trips as possible."""
        shards = [user % self._shards for user in users]
        blocks = self._blocks
        if blocks is None or not shards or not self._store.holds_blocks():
            return self._exact(shards)
        runs = [
            Reserved(*run)
            for run in blocks.take_run(len(shards), self._offset(), self._reserve_block)
        ]
        if self._metrics:
            for run in runs:
                self._count(run.first_sequence, run.count)
        numbers = self._numbers(runs, shards)
        if len(numbers) < len(shards):  # the rest, reserved apart
            numbers += self._exact(shards[len(numbers) :])
        return numbers

    def _exact(self, shards: list[int]) -> list[int]:
        """Numbers for ``shards`` reserved apart from any block, which they come after."""
        reserved = self._reserve(len(shards))
        if self._blocks is not None and reserved:
            # Nothing of a block reserved before them may be issued after them.
            last = reserved[-1]
            self._blocks.passed((last.local_second, last.first_sequence + last.count - 1))
        return self._numbers(reserved, shards)

    def _reserve(self, count: int) -> list[Reserved]:
        """Reservations of ``count`` numbers in all, increasing."""
        reserved: list[Reserved] = []
        retries = _Retries()
        while count:
            outcome = self._call(self._store.reserve, self._args(count))
            if type(outcome) is Reserved:
                reserved.append(outcome)
                count -= outcome.count
                if self._metrics:
                    self._count(outcome.first_sequence, outcome.count)
            else:
                self._settle(outcome, retries)
        return reserved

    def _numbers(self, reserved: list[Reserved], shards: list[int]) -> list[int]:
        """The numbers of ``reserved``, one per shard of ``shards``."""
        numbers: list[int] = []
        plain = self._shown is None and self._check is None
        for outcome in reserved:
            start, second, sequence = len(numbers), outcome.local_second, outcome.first_sequence
            if plain:  # one composition a reservation: the numbers step by the sequence
                first, step = self._compose(second, sequence, 0), self._seq_factor
                steps = range(first, first + outcome.count * step, step)
                numbers.extend(map(add, steps, shards[start : start + outcome.count]))
            else:
                numbers.extend(
                    self._compose(second, sequence + i, shards[start + i])
                    for i in range(outcome.count)
                )
        return numbers

    def _settle(self, outcome: Any, retries: _Retries) -> None:
        """Wait, recover or renew as a store's other answer says, or raise its refusal."""
        if isinstance(outcome, SecondFull):
            self._wait_for_a_second(outcome, retries)
        elif isinstance(outcome, Resuming):
            # Recovered a moment ago: at most a second, whatever SNOWID_ORDER_WHEN_FULL.
            metrics.count("waits", "orders", "recovery")
            self.sleep(outcome.wait_ms / 1000)
        elif isinstance(outcome, OutsideWindow) and retries.renewed < MAX_RECOVERIES:
            retries.renewed += 1
            self._keys.renew(outcome.second)
            self._one = self._args_of_one()
        elif isinstance(outcome, KeyConflict):
            raise self._refuse("key_conflict", self._keys.refusal(outcome))
        elif isinstance(outcome, ClockBehind):
            raise self._refuse("clock_behind", self._clock_behind(outcome))
        elif outcome is MISSING and retries.recovered < MAX_RECOVERIES:
            # The store lost its state (or the stream is new): rebuild it first.
            self.recover(lost=True)
            retries.recovered += 1
        else:
            raise self._refuse("recovery", self._lost_again(retries))

    def _wait_for_a_second(self, outcome: SecondFull, retries: _Retries) -> None:
        if self._raise_when_full:
            raise self._refuse("second_full", OrderSecondFull(self._full_message()))
        now = time.monotonic()
        if retries.deadline is None:
            retries.deadline = now + self._max_wait_s
        if now + outcome.wait_ms / 1000 > retries.deadline:
            raise self._refuse("second_full", OrderSecondFull(self._full_message(waited=True)))
        metrics.count("waits", "orders", "second_full")
        self.sleep(outcome.wait_ms / 1000)

    def _clock_behind(self, outcome: ClockBehind) -> OrderClockBehind:
        return OrderClockBehind(
            f"The clock of the order-number store is {outcome.seconds} s behind the last "
            f"number of stream {self.stream!r}, more than the {self._max_lead} s allowed "
            "(SNOWID_ORDER_MAX_BACKWARDS_S); nothing was issued."
        )

    def _lost_again(self, retries: _Retries) -> OrderNumberError:
        if retries.renewed >= MAX_RECOVERIES:
            return OrderNumberError(
                f"The store kept answering that stream {self.stream!r} issues outside this "
                f"process's key window, {retries.renewed} times; nothing was issued."
            )
        return OrderNumberError(
            f"The store lost the state of stream {self.stream!r} again right after it was "
            f"recovered, {retries.recovered} times; nothing was issued."
        )

    def _refuse(self, cause: str, error: OrderNumberError) -> OrderNumberError:
        metrics.refused(logger, "orders", cause, str(error))
        return error

    def recover(self, *, force: bool = False, lost: bool = False) -> None:
        """Recover the stream from the database; ``force``: resume past the store's clock in
        any case; ``lost``: the store holds no verified state (logged once)."""
        if force and self._blocks is not None:
            self._blocks.drop()  # the store issued a number again: nothing held is trusted
        database = database_position(fields_of_stream(self.stream), self.format).position
        before, after = resume_past(
            self.stream,
            self.format,
            database,
            force=force,
            first_sequence=self._args(1).first_sequence,
        )
        if before == after:
            return  # the store's state was verified (or another caller rebuilt it)
        if self._blocks is not None:
            self._blocks.drop()
        if lost:
            logger.warning(
                "Store loss detected: the order-number store %r held no verified state of "
                "stream %r (restarted, flushed or failed over); recovered from the database.",
                self._store_name,
                self.stream,
            )
        # A lost or new state is rebuilt; a foreign, conflicting or overtaken one re-synced.
        kind = "recoveries" if before is None else "failover_resyncs"
        metrics.count(kind, "orders", self._store_name)
        logger.info(
            "Recovery done: stream %r of the order-number store %r resumes after %s (it held %s).",
            self.stream,
            self._store_name,
            self._position_text(after),
            "nothing" if before is None else self._position_text(before),
        )

    def _position_text(self, position: tuple[int, int]) -> str:
        """A stream's position as people read it (its second in UTC, its sequence)."""
        when = iso_utc(self.format.time_of_local_second(position[0]), milliseconds=False)
        return f"{when} #{position[1]}"

    def _stem(self, local_second: int) -> int:
        cached_second, stem = self._stem_cache
        if cached_second != local_second:
            stem = self.format.stem_of_local_second(local_second)
            self._stem_cache = (local_second, stem)
        return stem

    def _full_message(self, waited: bool = False) -> str:
        cap = self.format.max_sequence
        how = (
            f"waiting for the next second would exceed SNOWID_ORDER_MAX_WAIT_MS="
            f"{conf.ORDER_MAX_WAIT_MS}"
            if waited
            else "SNOWID_ORDER_WHEN_FULL is 'raise'"
        )
        return (
            f"All {cap} order numbers of this second of stream {self.stream!r} are used and "
            f"{how}; nothing was issued."
        )


_lock = threading.Lock()
_issuers: metrics.Registry[tuple[str, OrderNumberFormat], StreamIssuer] = metrics.Registry()


@on_settings_changed
def _forget_issuers() -> None:
    # Their counts stay in the counters: a counter never goes back.
    for issuer in list(_issuers.values()):
        for name, labels, read in _readers_of(issuer):
            value = read()
            if value:
                metrics.count(name, *labels, by=value)
    _issuers.clear()


def _readers_of(issuer: StreamIssuer) -> Iterator[tuple[str, tuple[str, ...], metrics.Reader]]:
    labels = (issuer.stream, issuer._store_name)
    yield "order_numbers_issued", labels, partial(getattr, issuer, "_issued")
    blocks = issuer._blocks
    if blocks is not None:
        yield "order_numbers_abandoned", labels, partial(getattr, blocks, "abandoned")
        yield "order_blocks", labels, partial(getattr, blocks, "blocks")
        yield "order_block_numbers", labels, partial(getattr, blocks, "reserved")


def block_sizes() -> dict[str, int]:
    """The size of this process's next block of each stream it issued numbers of."""
    return {issuer.stream: issuer.block_size() for issuer in list(_issuers.values())}


def _issued() -> Iterator[tuple[str, tuple[str, ...], metrics.Reader]]:
    for issuer in list(_issuers.values()):
        yield from _readers_of(issuer)


def _fill() -> Iterator[tuple[str, float]]:
    for issuer in list(_issuers.values()):
        yield issuer.stream, issuer.read_metrics()[1]


metrics.register(live=_issued, fill=_fill)


def _after_fork_in_child() -> None:
    # A child is a new process: its counts start at zero (metrics, multiprocess files).
    for issuer in list(_issuers.values()):
        issuer._issued = issuer._peak = 0


os.register_at_fork(after_in_child=_after_fork_in_child)


def get_issuer(stream: str, fmt: OrderNumberFormat) -> StreamIssuer:
    """This process's issuer of ``stream`` in ``fmt``, made (and recovered against the
    database) on first use."""
    issuer = _issuers.get((stream, fmt))
    if issuer is None:
        with _lock:
            issuer = _issuers.get((stream, fmt))
            if issuer is None:
                issuer = StreamIssuer(stream, fmt)
                issuer.recover()
                _issuers[(stream, fmt)] = issuer
    return issuer
