"""The admin's decode page: any id or order number taken apart.

The decode page lives at ``admin:snowid_decode`` (``<admin>/django_snowid/iddecoder/``),
hosted by the table-less :class:`~django_snowid.models.IdDecoder` so that the admin index
links to it. On a custom admin site: ``site.register(IdDecoder, IdDecoderAdmin)``.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import quote
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse

from ..db.private import model_admin
from ..decoding import DecodedRow, decode_tokens
from .forms import DecodeForm
from .pages import ReadOnlyPageAdmin

__all__ = ["IdDecoderAdmin"]

#: Up to this many values the page shows a card per value (parts, bits); beyond, a table.
CARD_LIMIT = 10


class IdDecoderAdmin(ReadOnlyPageAdmin):
    """The decode page. Any active staff member may use it; it writes nothing."""

    url_name = "snowid_decode"

    def page_view(self, request: HttpRequest) -> HttpResponse:
        data = request.POST if request.method == "POST" else request.GET
        form = DecodeForm(data if "ids" in data else None)
        rows: list[DecodedRow] = []
        if form.is_valid():
            rows = decode_tokens(form.cleaned_data["ids"], form.cleaned_data["reading"])
            _add_links(rows, request, self.admin_site)
            export = data.get("export")
            if export in ("csv", "json"):
                return _export(rows, export)
        errors = sum(1 for r in rows if r.error)
        context = {
            **self.admin_site.each_context(request),
            "title": "Decode ids and order numbers",
            "opts": self.model._meta,
            "form": form,
            "rows": rows,
            "errors": errors,
            "decoded": len(rows) - errors,
            "as_table": len(rows) > CARD_LIMIT,
            "card_limit": CARD_LIMIT,
        }
        return TemplateResponse(request, "admin/django_snowid/decode.html", context)


def _add_links(rows: list[DecodedRow], request: HttpRequest, site: admin.AdminSite) -> None:
    """Link each decoded value to the change page of the row that holds it, if any.

    One query per field, whatever the number of ids.
    """
    by_field: dict[Any, list[DecodedRow]] = {}
    for row in rows:
        for each in row.fields:
            by_field.setdefault(each, []).append(row)
    for each, field_rows in by_field.items():
        model = each.model
        admin_of_model = model_admin(site, model)
        if admin_of_model is None or not admin_of_model.has_view_permission(request):
            continue
        values = {r.value for r in field_rows if not r.error}
        found = dict(
            model._base_manager.filter(**{f"{each.attname}__in": values}).values_list(
                each.attname, "pk"
            )
        )
        for row in field_rows:
            if row.value in found and not row.link:
                opts = model._meta
                try:
                    row.link = reverse(
                        f"{site.name}:{opts.app_label}_{opts.model_name}_change",
                        args=[quote(found[row.value])],
                    )
                except NoReverseMatch:
                    continue


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
