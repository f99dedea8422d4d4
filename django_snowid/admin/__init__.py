"""The admin: the decode page, the status page, and the mixin of model admins."""

from __future__ import annotations

from .mixins import CreatedFilter, IdDecoderAdmin, SnowflakeAdminMixin, SnowflakeModelAdmin

__all__ = ["CreatedFilter", "IdDecoderAdmin", "SnowflakeAdminMixin", "SnowflakeModelAdmin"]
