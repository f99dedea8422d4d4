"""The admin: the decode and status pages, registered on the default admin site here, and
the mixin of model admins."""

from __future__ import annotations

from django.apps import apps
from django.contrib import admin

from .decode import IdDecoderAdmin
from .mixins import CreatedFilter, SnowflakeAdminMixin, SnowflakeModelAdmin
from .status import StatusAdmin

__all__ = [
    "CreatedFilter",
    "IdDecoderAdmin",
    "SnowflakeAdminMixin",
    "SnowflakeModelAdmin",
    "StatusAdmin",
]

if apps.is_installed("django_snowid"):
    # Without the app its models cannot load: the mixin still imports, and E031 says why.
    from ..models import IdDecoder, StoreStatus

    admin.site.register(IdDecoder, IdDecoderAdmin)
    admin.site.register(StoreStatus, StatusAdmin)
