"""Model admin support for our fields: decoded columns and panel, a "created" filter, id search."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html, format_html_join

from .. import inventory
from ..core.digits import parse_digits
from ..core.layout import DecodedId
from ..core.order_format import DecodedOrderNumber
from ..exceptions import TRY_AGAIN, SnowidError
from ..readings import time_texts

__all__ = ["SECOND_NOTE", "CreatedFilter", "SnowflakeAdminMixin", "SnowflakeModelAdmin"]

logger = logging.getLogger(__name__)


#: Said where a number's second is shown beside its row's creation time.
SECOND_NOTE = (
    "second can be one second after its row's creation: a stream that resumes (after a "
    "recovery, or when its second is full) starts at the next second"
)


def _snowflake_field(model: type[models.Model]) -> Any:
    return inventory.field_of(model, inventory.SNOWFLAKE)


def _decoded_snowflake(obj: models.Model) -> DecodedId | SnowidError | None:
    """``obj``'s Snowflake id decoded, the error decoding it, or None without a value."""
    each = _snowflake_field(type(obj))
    value = getattr(obj, each.attname) if each else None
    if not value:
        return None
    try:
        return cast(DecodedId, each.decode(value))
    except SnowidError as exc:
        return exc


def _order_field(model: type[models.Model]) -> Any:
    return next(
        (f for f in model._meta.concrete_fields if inventory.kind_of(f) is inventory.ORDER), None
    )


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
        if span is None or inventory.kind_of(pk) is not inventory.SNOWFLAKE:
            return queryset
        return queryset.filter(pk__created_after=datetime.now(timezone.utc) - span)


def _typed_problem(field: Any, value: int, term: str) -> str | None:
    """``None`` when ``field`` can be searched for ``value``; else the error to show, or ``""``."""
    check = getattr(field, "check_typed", None)
    if check is None:
        return None
    try:
        check(value)
    except SnowidError as exc:
        return str(exc) if len(term) == getattr(field, "typed_length", 0) else ""
    return None


class SnowflakeAdminMixin:
    """Decoded columns and panel, a "created" filter by primary key, and search by a pasted id."""

    model: type[models.Model]

    class Media:
        css = {"all": ["django_snowid/changelist.css"]}

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
            when = f"{utc} UTC ({local} {zone})" if local != utc else f"{utc} UTC"
            if isinstance(decoded, DecodedOrderNumber):
                detail = f"{when}, sequence {decoded.sequence}, shard {decoded.shard}"
                if _snowflake_field(self.model) is obj._meta.pk:
                    detail += f" (its {SECOND_NOTE})"
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
        if inventory.kind_of(pk) is inventory.SNOWFLAKE and CreatedFilter not in filters:
            filters.append(CreatedFilter)
        return filters

    def get_search_fields(self, request: HttpRequest) -> Any:
        # Makes the search box appear; a pasted id is matched in get_search_results.
        return list(super().get_search_fields(request)) or ["pk__exact"]  # type: ignore[misc]

    def get_search_results(self, request: HttpRequest, queryset: Any, search_term: str) -> Any:
        """The admin's own search, plus (never instead) the rows whose id or number is the term."""
        term = search_term.strip(" ")
        lookups = models.Q()
        try:
            value = parse_digits(term)
        except SnowidError:  # not an id (letters, 5,000 digits): the normal search only
            value = 0
        if 0 < value < 2**63:
            for each in self.model._meta.concrete_fields:
                if inventory.kind_of(each) in inventory.DECODABLE:
                    problem = _typed_problem(each, value, term)
                    if problem is not None:
                        if problem:
                            messages.error(request, problem)
                        continue
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

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        """A save refused for a while is rolled back and shown as a form error."""

        try:
            return super().changeform_view(request, object_id, form_url, extra_context)  # type: ignore[misc]
        except TRY_AGAIN as exc:
            if request.method != "POST":
                raise
            logger.warning("%s %s: nothing was saved: %s", request.method, request.path, exc)
            request.snowid_refusal = exc  # type: ignore[attr-defined]
            return super().changeform_view(request, object_id, form_url, extra_context)  # type: ignore[misc]

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change, **kwargs)  # type: ignore[misc]
        refusal = getattr(request, "snowid_refusal", None)
        if refusal is None:
            return form
        message = f"{refusal} Nothing was saved: try again in a moment."

        def clean(self: forms.ModelForm) -> Any:
            raise forms.ValidationError(message, code="try_again")

        return type(form.__name__, (form,), {"clean": clean})


class SnowflakeModelAdmin(SnowflakeAdminMixin, admin.ModelAdmin):
    """A ready-made ModelAdmin with the decoded columns, panel, filter and id search."""
