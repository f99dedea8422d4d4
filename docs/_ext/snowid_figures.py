"""The benchmarks' figures of docs/performance.rst (filled in below)."""

from __future__ import annotations


def figures_rst() -> list[str]:
    return []
