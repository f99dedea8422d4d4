from __future__ import annotations

from django.apps import AppConfig


class ShopConfig(AppConfig):
    name = "docshop"
    label = "shop"
    # What `startapp` writes: the mistake of W030 (the scenarios read it only there).
    default_auto_field = "django.db.models.BigAutoField"
