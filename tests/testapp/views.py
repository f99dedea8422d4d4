"""Views reached through public ids (django_snowid.ids.publicids)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse

from .models import Product, Ticket


def product_detail(request: HttpRequest, pk: int) -> JsonResponse:
    """``<snowid_public:pk>`` in the URL: the converter hands over the int id."""
    product = get_object_or_404(Product, pk=pk)
    url = reverse("product-by-public-id", args=[product])
    return JsonResponse({"id": str(product.pk), "name": product.name, "url": url})


def ticket_lookup(request: HttpRequest) -> JsonResponse:
    """``?t=<public id>``: looked up through the manager helper."""
    ticket = get_object_or_404(Ticket.objects.public_id(request.GET.get("t", "")))
    return JsonResponse({"id": ticket.pk, "title": ticket.title})
