"""A small REST API over the test models (needs the ``drf`` extra)."""

from __future__ import annotations

from rest_framework import routers, serializers, viewsets

from django_snowid.drf import (
    SnowflakeCreatedField,
    SnowflakeIdField,
    SnowflakeModelSerializer,
    SnowflakeSerializerMixin,
    SnowflakeViewSetMixin,
)

from .models import Parcel, Product, Purchase, Review, Shopper, Tag, Ticket


class ProductSerializer(SnowflakeModelSerializer):
    created = SnowflakeCreatedField()

    class Meta:
        model = Product
        fields = ["id", "name", "created"]


def model_serializer(model: type, fields: list[str]) -> type[SnowflakeModelSerializer]:
    """A plain SnowflakeModelSerializer of ``model`` with ``fields``."""
    meta = type("Meta", (), {"model": model, "fields": fields})
    return type(f"{model.__name__}Serializer", (SnowflakeModelSerializer,), {"Meta": meta})


ReviewSerializer = model_serializer(Review, ["id", "product", "text"])
TagSerializer = model_serializer(Tag, ["id", "name", "products"])
TicketSerializer = model_serializer(Ticket, ["id", "public_id", "title"])


class NestedReviewSerializer(ReviewSerializer):  # type: ignore[valid-type,misc]
    class Meta(ReviewSerializer.Meta):  # type: ignore[name-defined]
        depth = 1


ShopperSerializer = model_serializer(Shopper, ["id", "name"])
PurchaseSerializer = model_serializer(Purchase, ["id", "shopper", "number", "receipt"])
ParcelSerializer = model_serializer(Parcel, ["id", "purchase", "ticket"])


class NestedParcelSerializer(ParcelSerializer):  # type: ignore[valid-type,misc]
    class Meta(ParcelSerializer.Meta):  # type: ignore[name-defined]
        depth = 1


class LinkedPurchaseSerializer(SnowflakeSerializerMixin, serializers.HyperlinkedModelSerializer):
    class Meta:
        model = Purchase
        fields = ["url", "id", "shopper", "number", "receipt", "parcels"]


class TicketLookupSerializer(serializers.Serializer):
    """A writable id of the js53 layout."""

    ticket = SnowflakeIdField(layout="js")


class ProductViewSet(viewsets.ModelViewSet):
    queryset = Product.objects.order_by("pk")
    serializer_class = ProductSerializer


class ReviewViewSet(viewsets.ModelViewSet):
    queryset = Review.objects.order_by("pk")
    serializer_class = ReviewSerializer


class NestedReviewViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Review.objects.select_related("product").order_by("pk")
    serializer_class = NestedReviewSerializer


class TagViewSet(viewsets.ModelViewSet):
    queryset = Tag.objects.prefetch_related("products").order_by("pk")
    serializer_class = TagSerializer


class ShopperViewSet(SnowflakeViewSetMixin, viewsets.ModelViewSet):
    queryset = Shopper.objects.order_by("pk")
    serializer_class = ShopperSerializer


class PurchaseViewSet(SnowflakeViewSetMixin, viewsets.ModelViewSet):
    queryset = Purchase.objects.order_by("pk")
    serializer_class = PurchaseSerializer


class LinkedPurchaseViewSet(SnowflakeViewSetMixin, viewsets.ReadOnlyModelViewSet):
    queryset = Purchase.objects.prefetch_related("parcels").order_by("pk")
    serializer_class = LinkedPurchaseSerializer


class ParcelViewSet(SnowflakeViewSetMixin, viewsets.ModelViewSet):
    queryset = Parcel.objects.order_by("pk")
    serializer_class = ParcelSerializer


class NestedParcelViewSet(SnowflakeViewSetMixin, viewsets.ReadOnlyModelViewSet):
    queryset = Parcel.objects.select_related("purchase", "ticket").order_by("pk")
    serializer_class = NestedParcelSerializer


router = routers.DefaultRouter()
router.register("products", ProductViewSet)
router.register("reviews", ReviewViewSet)
router.register("nested-reviews", NestedReviewViewSet, basename="nested-review")
router.register("tags", TagViewSet)
router.register("shoppers", ShopperViewSet)
router.register("purchases", PurchaseViewSet)
router.register("linked-purchases", LinkedPurchaseViewSet, basename="linked-purchase")
router.register("parcels", ParcelViewSet)
router.register("nested-parcels", NestedParcelViewSet, basename="nested-parcel")
