"""The admin: the decode and status pages, registered on the default admin site here, and
the mixin of model admins."""

from __future__ import annotations

from django.contrib import admin

from ..models import IdDecoder, StoreStatus
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

admin.site.register(IdDecoder, IdDecoderAdmin)
admin.site.register(StoreStatus, StatusAdmin)
