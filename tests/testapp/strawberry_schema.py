"""A strawberry-graphql-django schema over the test models, made as its docs make one
(needs the ``strawberry`` extra)."""

from __future__ import annotations

import strawberry
import strawberry_django
from strawberry import auto
from strawberry_django import mutations

from django_snowid.graphql.strawberry import SequenceValue

from .models import Customer, Parcel, Purchase, Shopper, Ticket


@strawberry_django.type(Shopper)
class ShopperType:
    id: auto
    name: auto


@strawberry_django.filter_type(Purchase, lookups=True)
class PurchaseFilter:
    id: auto
    number: auto
    receipt: auto


@strawberry_django.type(Purchase, filters=PurchaseFilter)
class PurchaseType:
    id: auto
    shopper: ShopperType
    shopper_id: auto
    number: auto
    receipt: auto


@strawberry_django.type(Ticket)
class TicketType:
    id: auto
    public_id: auto
    title: auto


@strawberry_django.type(Parcel)
class ParcelType:
    id: auto
    purchase: PurchaseType
    purchase_id: auto
    ticket: TicketType | None
    ticket_id: auto


@strawberry_django.input(Parcel)
class ParcelInput:
    purchase_id: auto
    ticket_id: auto


@strawberry_django.type(Customer)
class CustomerType:
    id: auto
    number: auto


@strawberry.type
class Query:
    purchases: list[PurchaseType] = strawberry_django.field()
    parcels: list[ParcelType] = strawberry_django.field()
    tickets: list[TicketType] = strawberry_django.field()
    customers: list[CustomerType] = strawberry_django.field()

    @strawberry_django.field
    def customer(self, number: SequenceValue) -> CustomerType | None:
        return Customer.objects.filter(number=number).first()


@strawberry.type
class Mutation:
    create_parcel: ParcelType = mutations.create(ParcelInput)


schema = strawberry.Schema(query=Query, mutation=Mutation)
