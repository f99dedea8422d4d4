"""JSON views: what a browser receives."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from django_snowid.encoders import SnowflakeJSONEncoder

from .models import GiftCard, Order


def gift_cards(request: HttpRequest) -> JsonResponse:
    """js53 ids as plain JSON numbers: they fit a JavaScript number exactly."""
    cards = [{"id": c.pk, "code": c.code} for c in GiftCard.objects.order_by("pk")]
    return JsonResponse({"gift_cards": cards})


def orders(request: HttpRequest) -> JsonResponse:
    """64-bit ids: SnowflakeJSONEncoder writes them as strings; js53 public ids stay numbers."""
    rows = Order.objects.order_by("pk").values("id", "public_id", "number")
    return JsonResponse({"orders": list(rows)}, encoder=SnowflakeJSONEncoder)
