"""A graphene-django schema over the test models, made as graphene-django's docs make one
(needs the ``graphene`` extra)."""

from __future__ import annotations

import graphene
from graphene_django import DjangoObjectType

from django_snowid.graphql.graphene import OrderNumber, SequenceValue, SnowflakeID

from .models import Customer, Parcel, Purchase, Shopper, Ticket


def object_type(model: type) -> type[DjangoObjectType]:
    """A ``DjangoObjectType`` of every field of ``model``."""
    meta = type("Meta", (), {"model": model, "fields": "__all__"})
    return type(f"{model.__name__}Type", (DjangoObjectType,), {"Meta": meta})


ShopperType = object_type(Shopper)
PurchaseType = object_type(Purchase)
ParcelType = object_type(Parcel)
TicketType = object_type(Ticket)
CustomerType = object_type(Customer)


class Query(graphene.ObjectType):
    purchases = graphene.List(graphene.NonNull(PurchaseType), required=True)
    parcels = graphene.List(graphene.NonNull(ParcelType), required=True)
    tickets = graphene.List(graphene.NonNull(TicketType), required=True)
    customers = graphene.List(graphene.NonNull(CustomerType), required=True)
    purchase = graphene.Field(PurchaseType, number=OrderNumber(), receipt=OrderNumber())
    shopper = graphene.Field(ShopperType, id=SnowflakeID(required=True))
    ticket = graphene.Field(TicketType, id=SnowflakeID(required=True))
    customer = graphene.Field(CustomerType, number=SequenceValue(required=True))

    def resolve_purchases(root, info):
        return Purchase.objects.select_related("shopper").order_by("pk")

    def resolve_parcels(root, info):
        return Parcel.objects.select_related("purchase", "ticket").order_by("pk")

    def resolve_tickets(root, info):
        return Ticket.objects.order_by("pk")

    def resolve_customers(root, info):
        return Customer.objects.order_by("pk")

    def resolve_purchase(root, info, **lookup):
        return Purchase.objects.filter(**lookup).first()

    def resolve_shopper(root, info, id):
        return Shopper.objects.filter(pk=id).first()

    def resolve_ticket(root, info, id):
        return Ticket.objects.filter(pk=id).first()

    def resolve_customer(root, info, number):
        return Customer.objects.filter(number=number).first()


schema = graphene.Schema(query=Query)
