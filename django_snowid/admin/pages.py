"""What the admin's table-less pages share (the decode page, the status page)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.urls import path

__all__ = ["ReadOnlyPageAdmin"]


class ReadOnlyPageAdmin(admin.ModelAdmin):
    """A page, not a table: writes nothing; only active staff with ``permission`` see it.

    A subclass sets ``url_name`` and ``permission`` and serves the page with ``page_view``.
    """

    url_name: str
    permission: str

    def page_view(self, request: HttpRequest) -> HttpResponse:
        raise NotImplementedError

    def _guarded_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        return self.page_view(request)

    def get_urls(self) -> list[Any]:
        view = self.admin_site.admin_view(self._guarded_view)
        opts = self.model._meta
        # The changelist name is what the admin index links to.
        return [
            path("", view, name=self.url_name),
            path("", view, name=f"{opts.app_label}_{opts.model_name}_changelist"),
        ]

    def has_module_permission(self, request: HttpRequest) -> bool:
        user = request.user
        label = f"{self.model._meta.app_label}.{self.permission}"
        return user.is_active and user.is_staff and user.has_perm(label)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
