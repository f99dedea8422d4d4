"""The admin: a page that decodes any id or order number, and decoded columns for model admins.

The decode page lives at ``admin:snowid_decode`` (``<admin>/django_snowid/iddecoder/``),
hosted by the table-less :class:`~django_snowid.models.IdDecoder` so that the admin index
links to it. On a custom admin site: ``site.register(IdDecoder, IdDecoderAdmin)``.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta, timezone
from typing import Any, cast

from django.contrib import admin
from django.contrib.admin.utils import quote
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html, format_html_join

from . import inventory
from .adminpages import ReadOnlyPageAdmin
from .core.digits import parse_digits
from .core.layout import DecodedId
from .core.orderformat import DecodedOrderNumber
from .decoding import DecodedRow, decode_tokens, time_texts
from .exceptions import SnowidError
from .forms import DecodeForm
from .models import IdDecoder

__all__ = ["CreatedFilter", "IdDecoderAdmin", "SnowflakeAdminMixin", "SnowflakeModelAdmin"]

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


def _may_view(site: admin.AdminSite, request: HttpRequest, model: type[models.Model]) -> bool:
    """Whether the user may see ``model``'s rows here: registered, with view permission."""
    model_admin = site._registry.get(model)
    return model_admin is not None and model_admin.has_view_permission(request)


def _add_links(rows: list[DecodedRow], site: admin.AdminSite) -> None:
    """Link each decoded value to the change page of every row that holds it (the rows
    ``decode_tokens`` found in the tables the user may view)."""
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


admin.site.register(IdDecoder, IdDecoderAdmin)


# ------------------------------------------------------------ model admins
def _snowflake_field(model: type[models.Model]) -> Any:
    if inventory.kind_of(model._meta.pk) == "snowflake":
        return model._meta.pk
    for each in model._meta.concrete_fields:
        if inventory.kind_of(each) == "snowflake":
            return each
    return None


def _decoded_snowflake(obj: models.Model) -> DecodedId | SnowidError | None:
    """What ``obj``'s Snowflake field holds, decoded; the error for a value another layout
    wrote (a column says so rather than failing the page); None without a value."""
    each = _snowflake_field(type(obj))
    value = getattr(obj, each.attname) if each else None
    if not value:
        return None
    try:
        return cast(DecodedId, each.decode(value))
    except SnowidError as exc:
        return exc


def _order_field(model: type[models.Model]) -> Any:
    for each in model._meta.concrete_fields:
        if inventory.kind_of(each) == "order":
            return each
    return None


class CreatedFilter(admin.SimpleListFilter):
    """Filter by creation time through a primary-key range: no extra column, the pk index."""

    title = "created"
    parameter_name = "snowid_created"
    ranges = {
        "1h": timedelta(hours=1),
        "24h": timedelta(days=1),
        "7d": timedelta(days=7),
        "30d": timedelta(days=30),
    }

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            ("1h", "Last hour"),
            ("24h", "Last 24 hours"),
            ("7d", "Last 7 days"),
            ("30d", "Last 30 days"),
        ]

    def queryset(self, request: HttpRequest, queryset: models.QuerySet) -> models.QuerySet:
        span = self.ranges.get(self.value() or "")
        pk = queryset.model._meta.pk
        if span is None or inventory.kind_of(pk) != "snowflake":
            return queryset
        return queryset.filter(pk__created_after=datetime.now(timezone.utc) - span)


class SnowflakeAdminMixin:
    """Decoded columns ("created", "worker", "shard"), a decoded panel on the change form,
    a "created" filter through the primary key, and search by a pasted id."""

    model: type[models.Model]

    class Media:
        css = {"all": ["django_snowid/changelist.css"]}

    # Sorted by the primary key, which sorts by creation time when it is the Snowflake
    # field (the field the column decodes when there is one).
    @admin.display(description="created (UTC)", ordering="pk")
    def snowid_created(self, obj: models.Model) -> Any:
        decoded = _decoded_snowflake(obj)
        if isinstance(decoded, SnowidError):
            return str(decoded)
        return time_texts(decoded.time, milliseconds=True)[0] if decoded else None

    @admin.display(description="worker")
    def snowid_worker(self, obj: models.Model) -> Any:
        decoded = _decoded_snowflake(obj)
        if not isinstance(decoded, DecodedId):
            return None
        return " ".join(f"{k}={v}" for k, v in decoded.parts.items())

    @admin.display(description="shard")
    def snowid_shard(self, obj: models.Model) -> Any:
        each = _order_field(type(obj))
        if each is None:  # a Snowflake id with shard bits carries the shard too
            decoded = _decoded_snowflake(obj)
            if isinstance(decoded, DecodedId) and decoded.layout.shard_bits:
                return decoded.shard
            return None
        value = getattr(obj, each.attname)
        return each.shard_of(value) if value else None

    @admin.display(description="decoded")
    def snowid_decoded(self, obj: models.Model) -> Any:
        rows = []
        for each in obj._meta.concrete_fields:
            if inventory.kind_of(each) not in inventory.DECODABLE:
                continue
            value = getattr(obj, each.attname)
            if not value:
                continue
            try:
                decoded = cast(Any, each).decode(value)  # a field of ours: it decodes
            except SnowidError as exc:
                rows.append((each.verbose_name, str(value), str(exc)))
                continue
            is_order = isinstance(decoded, DecodedOrderNumber)
            utc, local, zone = time_texts(decoded.time, milliseconds=not is_order)
            when = f"{utc} UTC ({local} {zone})"
            if isinstance(decoded, DecodedOrderNumber):
                detail = f"{when}, sequence {decoded.sequence}, shard {decoded.shard}"
            else:
                parts = ", ".join(f"{k} {v}" for k, v in decoded.parts.items())
                detail = f"{when}, {parts}, sequence {decoded.sequence}"
                if decoded.layout.shard_bits:
                    detail += f", shard {decoded.shard}"
            rows.append((each.verbose_name, str(value), detail))
        if not rows:
            return "-"
        return format_html(
            '<table class="snowid-panel">{}</table>',
            format_html_join("", "<tr><th>{}</th><td>{}</td><td>{}</td></tr>", rows),
        )

    def _snowid_columns(self) -> list[str]:
        columns = []
        if _snowflake_field(self.model):
            columns += ["snowid_created", "snowid_worker"]
        flake = _snowflake_field(self.model)
        if _order_field(self.model) or (flake and flake.layout.shard_bits):
            columns.append("snowid_shard")
        return columns

    def get_list_display(self, request: HttpRequest) -> Any:
        display = list(super().get_list_display(request))  # type: ignore[misc]
        return display + [c for c in self._snowid_columns() if c not in display]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = list(super().get_readonly_fields(request, obj))  # type: ignore[misc]
        return fields if "snowid_decoded" in fields else [*fields, "snowid_decoded"]

    def get_list_filter(self, request: HttpRequest) -> Any:
        filters = list(super().get_list_filter(request))  # type: ignore[misc]
        pk = self.model._meta.pk
        if inventory.kind_of(pk) == "snowflake" and CreatedFilter not in filters:
            filters.append(CreatedFilter)
        return filters

    def get_search_fields(self, request: HttpRequest) -> Any:
        # Makes the search box appear; a pasted id is matched in get_search_results.
        return list(super().get_search_fields(request)) or ["pk__exact"]  # type: ignore[misc]

    def get_search_results(self, request: HttpRequest, queryset: Any, search_term: str) -> Any:
        """The admin's own search, plus the rows whose id or order number is the term.

        The id match is added to the ``search_fields`` results, never instead of them:
        on a model searched by name, "4" must still find "Cups (4)".
        """
        term = search_term.strip(" ")
        lookups = models.Q()
        try:
            value = parse_digits(term)
        except SnowidError:  # not an id (letters, 5,000 digits): the normal search only
            value = 0
        if 0 < value < 2**63:
            for each in self.model._meta.concrete_fields:
                if inventory.kind_of(each) in inventory.DECODABLE:
                    lookups |= models.Q(**{each.attname: value})
        own_fields = list(super().get_search_fields(request))  # type: ignore[misc]
        if own_fields:
            found, duplicates = super().get_search_results(  # type: ignore[misc]
                request, queryset, search_term
            )
            if lookups:
                return found | queryset.filter(lookups), duplicates
            return found, duplicates
        if lookups:
            return queryset.filter(lookups), False
        return queryset.none() if term else queryset, False


class SnowflakeModelAdmin(SnowflakeAdminMixin, admin.ModelAdmin):
    """A ready-made ModelAdmin with the decoded columns, panel, filter and id search."""


from .sequences import admin as sequences_admin  # noqa: E402, F401  (the status page)
