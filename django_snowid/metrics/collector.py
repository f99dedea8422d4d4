"""The Prometheus side of :mod:`django_snowid.metrics`: a collector that reads the plain
counts at scrape time (registered when ``SNOWID_METRICS`` is on)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from prometheus_client.core import (
    REGISTRY,
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry

from .. import metrics
from ..checks import configured_layouts

__all__ = ["DESCRIPTIONS", "REMAINING_HELP", "RENEW_HELP", "SnowidCollector", "install"]

#: Each counter's help text (the names are ``snowid_<key>_total``).
DESCRIPTIONS = {
    "ids_issued": "Snowflake ids issued by this process",
    "order_numbers_issued": "Order numbers issued by this process",
    "order_numbers_abandoned": "Order numbers of this process's blocks left unused when "
    "their second ended (gaps, never issued)",
    "order_blocks": "Blocks of order numbers this process reserved (one store call each)",
    "order_block_numbers": "Order numbers the blocks of this process reserved (divided by "
    "snowid_order_blocks_total: the mean block size)",
    "sequence_values_issued": "Sequence values issued by this process",
    "refusals": "Calls that issued nothing and raised, by part and cause",
    "waits": "Waits before issuing, by part and cause",
    "recoveries": "Store states rebuilt from the database (lost, or a stream's first use)",
    "failover_resyncs": "Store states written by another server, re-synced from the database",
    "leases_acquired": "Worker-id leases taken",
    "leases_lost": "Worker-id leases lost (expired unrenewed, or taken by another holder)",
}


#: The help texts of the histogram and of the time-bits gauge.
RENEW_HELP = "How long a worker-id lease renewal took"
REMAINING_HELP = "Seconds until a layout's time bits run out (no id can be issued after)"


class SnowidCollector(Collector):
    """Every metric of django-snowid, read from :mod:`django_snowid.metrics`."""

    def collect(self) -> Iterator[Metric]:
        totals = metrics.totals()
        for name, label_names in metrics.COUNTERS.items():
            family = CounterMetricFamily(
                f"snowid_{name}", DESCRIPTIONS[name], labels=list(label_names)
            )
            for (counter, labels), value in sorted(totals.items()):
                if counter == name:
                    family.add_metric(list(labels), value)
            yield family
        yield GaugeMetricFamily(
            "snowid_order_busiest_second_fill_ratio",
            "The largest fraction of a second's cap of numbers any order stream used "
            "since the previous scrape",
            value=metrics.busiest_fill(),
        )
        latency = HistogramMetricFamily(
            "snowid_lease_renew_seconds",
            RENEW_HELP,
            labels=["store"],
        )
        for store, (buckets, total) in sorted(metrics.latency().items()):
            latency.add_metric([store], buckets, total)
        yield latency
        remaining = GaugeMetricFamily(
            "snowid_time_bits_remaining_seconds",
            REMAINING_HELP,
            labels=["layout"],
        )
        now = time.time()
        for layout in configured_layouts()[0]:
            remaining.add_metric([layout.name], layout.exhausted_at.timestamp() - now)
        yield remaining

    def describe(self) -> list[Any]:
        return []  # collected at scrape time only: never at registration


_installed: list[tuple[CollectorRegistry, SnowidCollector]] = []


def install(registry: CollectorRegistry = REGISTRY) -> SnowidCollector:
    """Register the collector with ``registry`` (once per registry)."""
    for known, collector in _installed:
        if known is registry:
            return collector
    collector = SnowidCollector()
    registry.register(collector)
    _installed.append((registry, collector))
    return collector
