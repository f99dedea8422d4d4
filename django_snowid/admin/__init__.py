"""The admin: the decode page (:mod:`.decode`), the status page (:mod:`.status`), both
registered on the default admin site here, and the mixin of model admins
(:mod:`.mixins`).

On a custom admin site, register the pages there too:
``site.register(IdDecoder, IdDecoderAdmin)`` and ``site.register(StoreStatus,
StatusAdmin)`` (the models from ``django_snowid.models``).
"""

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
