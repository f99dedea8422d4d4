"""What the admin's table-less pages share (the decode page, the status page)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import path

__all__ = ["ReadOnlyPageAdmin"]


class ReadOnlyPageAdmin(admin.ModelAdmin):
    """A page, not a table: any active staff member may see it; it writes nothing.

    A subclass names its URL (``url_name``) and serves it with ``page_view``.
    """

    url_name: str

    def page_view(self, request: HttpRequest) -> HttpResponse:
        raise NotImplementedError

    def get_urls(self) -> list[Any]:
        view = self.admin_site.admin_view(self.page_view)
        opts = self.model._meta
        # The changelist name is what the admin index links to.
        return [
            path("", view, name=self.url_name),
            path("", view, name=f"{opts.app_label}_{opts.model_name}_changelist"),
        ]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
