"""The admin's decode page (``admin:snowid_decode``): any id or order number taken apart."""

from __future__ import annotations

import csv
import io
import json

from django.contrib import admin
from django.contrib.admin.utils import quote
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse

from ..db.private import model_admin
from ..readings import DecodedRow, decode_tokens
from .forms import DecodeForm
from .mixins import SECOND_NOTE
from .pages import ReadOnlyPageAdmin

__all__ = ["IdDecoderAdmin"]

#: Up to this many values the page shows a card per value (parts, bits); beyond, a table.
CARD_LIMIT = 10


class IdDecoderAdmin(ReadOnlyPageAdmin):
    """The decode page, for staff with ``django_snowid.view_decode``; writes nothing."""

    permission = "view_decode"
    url_name = "snowid_decode"

    def page_view(self, request: HttpRequest) -> HttpResponse:
        data = request.POST if request.method == "POST" else request.GET
        form = DecodeForm(data if "ids" in data else None)
        rows: list[DecodedRow] = []
        if form.is_valid():
            site = self.admin_site
            rows = decode_tokens(
                form.cleaned_data["ids"],
                form.cleaned_data["reading"],
                visible=lambda model: _may_view(site, request, model),
            )
            _add_links(rows, site)
            export = data.get("export")
            if export in ("csv", "json"):
                return _export(rows, export)
        errors = sum(1 for r in rows if r.error)
        legacy = sum(1 for r in rows if r.kind == "legacy")
        context = {
            **self.admin_site.each_context(request),
            "title": "Decode ids and order numbers",
            "opts": self.model._meta,
            "form": form,
            "rows": rows,
            "errors": errors,
            "legacy": legacy,
            "decoded": len(rows) - errors - legacy,
            "as_table": len(rows) > CARD_LIMIT,
            "card_limit": CARD_LIMIT,
            "second_note": SECOND_NOTE,
        }
        return TemplateResponse(request, "admin/django_snowid/decode.html", context)


def _may_view(site: admin.AdminSite, request: HttpRequest, model: type[models.Model]) -> bool:
    """Whether the user may see ``model``'s rows here: registered, with view permission."""
    admin_of_model = model_admin(site, model)
    return admin_of_model is not None and admin_of_model.has_view_permission(request)


def _add_links(rows: list[DecodedRow], site: admin.AdminSite) -> None:
    """Link each decoded value to the change page of every row the user may view that holds it."""

    for row in rows:
        for holder in row.holders:
            opts = holder.field.model._meta
            try:
                url = reverse(
                    f"{site.name}:{opts.app_label}_{opts.model_name}_change",
                    args=[quote(holder.pk)],
                )
            except NoReverseMatch:
                continue
            row.links.append((f"{opts.verbose_name} {holder.pk} ({holder.field.name})", url))
        row.link = row.links[0][1] if row.links else ""


def _export(rows: list[DecodedRow], kind: str) -> HttpResponse:
    """The rows as shown, as a CSV or JSON download (every value a string)."""
    records = [row.as_record() for row in rows]
    if kind == "json":
        body, content_type = json.dumps(records, indent=2), "application/json"
    else:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
        body, content_type = out.getvalue(), "text/csv; charset=utf-8"
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="decoded.{kind}"'
    return response
