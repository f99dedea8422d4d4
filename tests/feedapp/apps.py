from __future__ import annotations

from django.apps import AppConfig


class FeedAppConfig(AppConfig):
    name = "tests.feedapp"
    label = "feedapp"
