"""Issuing order numbers: one :class:`StreamIssuer` per stream and format, on a store."""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from .. import inventory, metrics
from ..conf import conf, on_settings_changed
from ..core.layout import iso_utc
from ..core.order_format import OrderNumberFormat
from ..core.order_stream import ClockBehind, Reserved, Resuming, SecondFull
from ..exceptions import (
    OrderClockBehind,
    OrderNumberError,
    OrderNumberUnavailable,
    OrderSecondFull,
)
from .recovery import database_position, resume_past
from .stores import MISSING, ReserveArgs, get_store

__all__ = ["StreamIssuer", "fields_of_stream", "get_issuer"]

DST_EXTRA_LEAD_S = 3600  # the repeated hour of a fall-back
# A store flushed again and again (right between a recovery and the reservation after it)
# gets this many recoveries in one call before the caller is told.
MAX_RECOVERIES = 5

logger = logging.getLogger(__name__)


def fields_of_stream(stream: str) -> list[Any]:
    """The order-number fields of the installed models that share ``stream``."""
    return [field for field in inventory.order_fields() if field.stream == stream]


class StreamIssuer:
    """Issues the numbers of one stream in this process."""

    def __init__(self, stream: str, fmt: OrderNumberFormat) -> None:
        self.stream = stream
        self.format = fmt
        self._utc = fmt.zone == "UTC"
        self._stem_cache: tuple[int, int] = (-1, 0)
        # Issuers are forgotten whenever a SNOWID_* setting changes, so the settings of
        # the hot path can be read once here.
        self._store = get_store()
        self._cap = fmt.max_sequence
        self._shards = fmt.shard_count
        self._stem_factor = fmt._stem_factor
        self._seq_factor = fmt._seq_factor
        # A concealed sequence or a check digit: each number is finished by the format.
        self._shown = fmt.shown_sequence if fmt.cipher is not None else None
        self._check = fmt.with_check_digit if fmt.check_digit else None
        self._random_start = int(conf.ORDER_RANDOM_START)
        lead = int(conf.ORDER_MAX_BACKWARDS_S)
        self._max_lead = lead + DST_EXTRA_LEAD_S if conf.ORDER_ALLOW_DST else lead
        self._raise_when_full = conf.ORDER_WHEN_FULL == "raise"
        self._max_wait_s = conf.ORDER_MAX_WAIT_MS / 1000
        # The arguments of a one-number reservation, when they never change.
        self._one = None if self._random_start or not self._utc else self._args(1)
        # SNOWID_METRICS: count the numbers issued, and the fullest second (its largest
        # sequence) since metrics last read it.
        self._metrics = bool(conf.METRICS)
        #: Waits for the next second (tests give the store's clock and this together).
        self.sleep = time.sleep
        self._store_name = self._store.name
        self._issued = 0
        self._peak = 0

    def next_number(self, user: int = 0) -> int:
        """The next number of the stream, for a user of id ``user`` (its shard, the low bits
        or digits of ``user``, ends the number; a shard value is its own shard)."""
        # The common case in one reservation and no list; anything else (a full second,
        # recovery, errors) goes through next_numbers(), which nothing was issued for yet.
        try:
            outcome = self._store.reserve(self.stream, self._one or self._args(1))
        except OrderNumberUnavailable:
            self._unreachable()
            raise
        if type(outcome) is Reserved:
            if self._metrics:
                self._count(outcome.first_sequence, 1)
            shard = user % self._shards  # the format's shard_of_user(), without the call
            return self._compose(outcome.local_second, outcome.first_sequence, shard)
        return self.next_numbers([user])[0]

    def _count(self, first_sequence: int, count: int) -> None:
        # Plain ints, no lock: a lost update under a race costs one count, never a number.
        self._issued += count
        last = first_sequence + count - 1
        if last > self._peak:
            self._peak = last

    def read_metrics(self) -> tuple[int, float]:
        """Numbers issued so far, and the largest fraction of a second's cap used since
        the last read (which starts the next period)."""
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

    def _args(self, count: int) -> ReserveArgs:
        return ReserveArgs(
            offset=0 if self._utc else self.format.utc_offset_at(time.time()),
            cap=self._cap,
            wanted=count,
            first_sequence=1 + random.randint(0, self._random_start) if self._random_start else 1,
            max_lead=self._max_lead,
        )

    def _compose(self, local_second: int, sequence: int, shard: int) -> int:
        if self._shown is not None:
            sequence = self._shown(local_second, sequence)
        number = self._stem(local_second) * self._stem_factor + sequence * self._seq_factor + shard
        return number if self._check is None else self._check(number)

    def next_numbers(self, users: Sequence[int]) -> list[int]:
        """Numbers for the given users, reserved in as few round trips as possible.

        One number: one round trip. A block (bulk_create) reserves up to the rest of the
        current second in one round trip; the block's numbers increase, but numbers other
        processes issue meanwhile may fall between them.
        """
        shards = [user % self._shards for user in users]
        numbers: list[int] = []
        deadline: float | None = None
        recovered = 0
        while len(numbers) < len(shards):
            wanted = len(shards) - len(numbers)
            try:
                outcome = self._store.reserve(self.stream, self._args(wanted))
            except OrderNumberUnavailable:
                self._unreachable()
                raise
            if isinstance(outcome, Reserved):
                if self._metrics:
                    self._count(outcome.first_sequence, outcome.count)
                start = len(numbers)
                second, sequence = outcome.local_second, outcome.first_sequence
                if self._shown is not None or self._check is not None:
                    numbers.extend(
                        self._compose(second, sequence + i, shards[start + i])
                        for i in range(outcome.count)
                    )
                    continue
                # The block's first number; each next one is one sequence step further.
                first = self._compose(second, sequence, 0)
                step = self._seq_factor
                numbers.extend(first + i * step + shards[start + i] for i in range(outcome.count))
            elif isinstance(outcome, SecondFull):
                if self._raise_when_full:
                    raise self._refuse("second_full", OrderSecondFull(self._full_message()))
                now = time.monotonic()
                if deadline is None:
                    deadline = now + self._max_wait_s
                if now + outcome.wait_ms / 1000 > deadline:
                    raise self._refuse(
                        "second_full", OrderSecondFull(self._full_message(waited=True))
                    )
                metrics.count("waits", "orders", "second_full")
                self.sleep(outcome.wait_ms / 1000)
            elif isinstance(outcome, Resuming):
                # Recovered a moment ago: at most a second, whatever SNOWID_ORDER_WHEN_FULL.
                metrics.count("waits", "orders", "recovery")
                self.sleep(outcome.wait_ms / 1000)
            elif isinstance(outcome, ClockBehind):
                raise self._refuse(
                    "clock_behind",
                    OrderClockBehind(
                        f"The clock of the order-number store is {outcome.seconds} s behind the "
                        f"last number of stream {self.stream!r}, more than the {self._max_lead} s "
                        "allowed (SNOWID_ORDER_MAX_BACKWARDS_S); nothing was issued."
                    ),
                )
            elif outcome is MISSING and recovered < MAX_RECOVERIES:
                # Redis restarted, was flushed or failed over (or the stream is new):
                # rebuild the state from the database before issuing anything.
                self.recover(lost=True)
                recovered += 1
            else:
                raise self._refuse(
                    "recovery",
                    OrderNumberError(
                        f"The store lost the state of stream {self.stream!r} again right after "
                        f"it was recovered, {recovered} times; nothing was issued."
                    ),
                )
        return numbers

    def _refuse(self, cause: str, error: OrderNumberError) -> OrderNumberError:
        metrics.refused(logger, "orders", cause, str(error))
        return error

    def recover(self, *, force: bool = False, lost: bool = False) -> None:
        """Recover the stream from the database; ``force``: after a number met a conflict
        there (the store issued it again), resume past the store's clock in any case.
        ``lost``: the store said it holds no verified state; the caller whose recovery
        rebuilds it logs the loss (one line, however many callers found it)."""
        database, _ = database_position(fields_of_stream(self.stream), self.format)
        before, after = resume_past(
            self.stream,
            self.format,
            database,
            force=force,
            first_sequence=self._args(1).first_sequence,
        )
        if before == after:
            return  # the store's state was verified (or another caller rebuilt it)
        if lost:
            logger.warning(
                "Store loss detected: the order-number store %r held no verified state of "
                "stream %r (restarted, flushed or failed over); recovered from the database.",
                self._store_name,
                self.stream,
            )
        # A state the store lost (or never had: a new stream) is rebuilt; one it holds but
        # that another server wrote (a failover), that met a conflict or that another store
        # overtook is re-synced.
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
        """A stream's position as people read it: its second in UTC, and its sequence."""
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
_issuers: dict[tuple[str, OrderNumberFormat], StreamIssuer] = {}


@on_settings_changed
def _forget_issuers() -> None:
    # Their counts stay in the counters: a counter never goes back.
    for issuer in list(_issuers.values()):
        issued, _ = issuer.read_metrics()
        if issued:
            metrics.count("order_numbers_issued", issuer.stream, issuer._store_name, by=issued)
    _issuers.clear()


def _issued() -> Iterator[tuple[str, tuple[str, ...], int]]:
    for issuer in list(_issuers.values()):
        yield "order_numbers_issued", (issuer.stream, issuer._store_name), issuer._issued


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
    """This process's issuer of ``stream`` in ``fmt``, made on first use.

    Before the process issues its first number of the stream, the store's state is
    checked against the database (:meth:`StreamIssuer.recover`: one ``max()`` a column
    and one call to the store): a state that the store kept from before another store
    issued the stream (another Redis server, another key prefix, the other backend)
    resumes past the database's largest number and the store's clock, instead of
    continuing from where that store left it, below numbers the other one issued.
    """
    issuer = _issuers.get((stream, fmt))
    if issuer is None:
        with _lock:
            issuer = _issuers.get((stream, fmt))
            if issuer is None:
                issuer = StreamIssuer(stream, fmt)
                issuer.recover()
                _issuers[(stream, fmt)] = issuer
    return issuer
