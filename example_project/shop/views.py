"""The shop's home page, and JSON views: what a browser receives."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from django_snowid.encoders import SnowflakeJSONEncoder

from .models import GiftCard, Order, Product


def home(request: HttpRequest) -> HttpResponse:
    """Where the admin's "View site" leads: links to the admin and the JSON views."""
    counts = {"products": Product.objects.count(), "orders": Order.objects.count()}
    return render(request, "shop/home.html", counts)


def gift_cards(request: HttpRequest) -> JsonResponse:
    """js53 ids as plain JSON numbers: they fit a JavaScript number exactly."""
    cards = [{"id": c.pk, "code": c.code} for c in GiftCard.objects.order_by("pk")]
    return JsonResponse({"gift_cards": cards})


def orders(request: HttpRequest) -> JsonResponse:
    """64-bit ids: SnowflakeJSONEncoder writes them as strings; js53 public ids stay numbers."""
    rows = Order.objects.order_by("pk").values("id", "public_id", "number")
    return JsonResponse({"orders": list(rows)}, encoder=SnowflakeJSONEncoder)
