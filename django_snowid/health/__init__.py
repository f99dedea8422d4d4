"""Checks for django-health-check, one per part of django-snowid the project uses
(:func:`checks_in_use`): each runs a probe of :mod:`.probes` and raises
``ServiceUnavailable`` for what stops issuing, ``ServiceWarning`` for what will.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from health_check import HealthCheck
from health_check.exceptions import HealthCheckException, ServiceUnavailable, ServiceWarning

from . import probes

__all__ = [
    "ClockNotBehind",
    "OrderNumberStore",
    "Redis",
    "SequenceStore",
    "TimeBits",
    "WorkerLease",
    "checks_in_use",
]


class _Check(HealthCheck):
    """Runs :meth:`probe` under both APIs: 4.x calls ``run()``, 3.24 ``check_status()``."""

    def probe(self) -> list[probes.Finding]:
        raise NotImplementedError

    def run(self) -> None:
        findings = self.probe()
        fatal = [f.message for f in findings if f.fatal]
        warnings = [f.message for f in findings if not f.fatal]
        if fatal:
            raise ServiceUnavailable(" ".join(fatal + warnings))
        if warnings:
            raise ServiceWarning(" ".join(warnings))

    def check_status(self, subset: Any = None) -> None:
        # 3.24 logs a raised error with its traceback, one handed to add_error in a line.
        try:
            self.run()
        except HealthCheckException as exc:
            self.add_error(exc)


@dataclasses.dataclass
class WorkerLease(_Check):
    """This process's worker-id leases: held, and renewed recently."""

    def probe(self) -> list[probes.Finding]:
        return probes.worker_leases()


@dataclasses.dataclass
class Redis(_Check):
    """The Redis server of django-snowid's Redis parts answers (a PING)."""

    def probe(self) -> list[probes.Finding]:
        return probes.redis_reachable()


@dataclasses.dataclass
class ClockNotBehind(_Check):
    """This host's clock is not behind the newest id of each layout in the database."""

    clock: Callable[[], int] = dataclasses.field(default=time.time_ns, repr=False)

    def probe(self) -> list[probes.Finding]:
        return probes.clock_not_behind(self.clock)


@dataclasses.dataclass
class TimeBits(_Check):
    """No layout's time bits run out within ``SNOWID_HEALTH_TIME_BITS_HORIZON``."""

    clock: Callable[[], float] = dataclasses.field(default=time.time, repr=False)

    def probe(self) -> list[probes.Finding]:
        return probes.time_bits(self.clock)


@dataclasses.dataclass
class OrderNumberStore(_Check):
    """The order-number store answers for each stream of the installed fields."""

    def probe(self) -> list[probes.Finding]:
        return probes.order_store_reachable()


@dataclasses.dataclass
class SequenceStore(_Check):
    """The named sequences' store (and the database of their marks) answers."""

    def probe(self) -> list[probes.Finding]:
        return probes.sequence_store_reachable()


def checks_in_use() -> list[str]:
    """The dotted paths of the checks for the parts this project uses."""

    return [f"{__name__}.{name}" for name in probes.parts_in_use()]
