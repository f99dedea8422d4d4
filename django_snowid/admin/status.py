"""The admin's read-only status page (``admin:snowid_status``): order-number streams,
worker leases and named sequences; a part whose store fails shows the error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.apps import apps
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from ..conf import conf
from ..orders.status import stream_rows
from ..workers.status import RECORDED, lease_rows
from .pages import ReadOnlyPageAdmin

__all__ = ["StatusAdmin"]


def _sequence_rows() -> list[dict[str, Any]]:
    from ..sequences.status import sequence_rows  # an app of its own: only when installed

    return sequence_rows()


def _read(part: Callable[[], list[dict[str, Any]]]) -> tuple[list[dict[str, Any]], str]:
    try:
        return part(), ""
    except Exception as exc:  # a status page shows a store's failure, whatever it is
        return [], f"{type(exc).__name__}: {exc}"


class StatusAdmin(ReadOnlyPageAdmin):
    """The status page, for staff with ``django_snowid.view_status``; writes nothing."""

    permission = "view_status"
    url_name = "snowid_status"

    def page_view(self, request: HttpRequest) -> HttpResponse:
        with_sequences = apps.is_installed("django_snowid.sequences")
        sequences, sequences_error = _read(_sequence_rows) if with_sequences else ([], "")
        streams, streams_error = _read(stream_rows)
        leases, leases_error = _read(lease_rows)
        context = {
            **self.admin_site.each_context(request),
            "title": self.model._meta.verbose_name_plural,  # the admin index's link
            "opts": self.model._meta,
            "with_sequences": with_sequences,
            "sequences": sequences,
            "sequences_error": sequences_error,
            "streams": streams,
            "streams_error": streams_error,
            "leases": leases,
            "leases_error": leases_error,
            "backend": conf.ORDER_BACKEND,
            "worker_source": conf.WORKER_ID_SOURCE,
            "leased": conf.WORKER_ID_SOURCE in RECORDED,
        }
        return TemplateResponse(request, "admin/django_snowid/status.html", context)
