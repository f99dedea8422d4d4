"""The admin's read-only status page: named sequences, order-number streams, worker leases.

It lives at ``admin:snowid_status`` (``<admin>/django_snowid/sequencestatus/``), hosted by
the table-less :class:`~django_snowid.sequences.models.SequenceStatus` so that the admin
index links to it. On a custom admin site: ``site.register(SequenceStatus, StatusAdmin)``.
Each part reads through its store's own read-only API; a part whose store fails shows
the error instead of hiding the page.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from ..conf import conf
from ..orders.status import stream_rows
from ..sequences.status import sequence_rows
from ..workers.stores import get_lease_store
from ..workers.stores.base import WHILE_ALIVE, expires_in_s
from .pages import ReadOnlyPageAdmin

__all__ = ["StatusAdmin"]


def _leases() -> list[dict[str, Any]]:
    if conf.WORKER_ID_SOURCE not in ("redis", "database"):
        return []
    now_ms = time.time_ns() // 1_000_000
    return [
        {**asdict(lease), "expires_in_s": expires_in_s(lease, now_ms)}
        for lease in get_lease_store(conf.WORKER_ID_SOURCE).leases()
        if lease.expires_ms > now_ms or lease.expires_ms == WHILE_ALIVE
    ]


def _read(part: Callable[[], list[dict[str, Any]]]) -> tuple[list[dict[str, Any]], str]:
    try:
        return part(), ""
    except Exception as exc:  # a status page shows a store's failure, whatever it is
        return [], f"{type(exc).__name__}: {exc}"


class StatusAdmin(ReadOnlyPageAdmin):
    """The status page; any active staff member may see it, it writes nothing."""

    url_name = "snowid_status"

    def page_view(self, request: HttpRequest) -> HttpResponse:
        sequences, sequences_error = _read(sequence_rows)
        streams, streams_error = _read(stream_rows)
        leases, leases_error = _read(_leases)
        context = {
            **self.admin_site.each_context(request),
            "title": "Sequences, streams and leases",
            "opts": self.model._meta,
            "sequences": sequences,
            "sequences_error": sequences_error,
            "streams": streams,
            "streams_error": streams_error,
            "leases": leases,
            "leases_error": leases_error,
            "backend": conf.ORDER_BACKEND,
        }
        return TemplateResponse(request, "admin/django_snowid/status.html", context)
