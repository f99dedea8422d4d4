"""factory_boy's Django factories make rows whose fields of ours carry their own values."""

from __future__ import annotations

import factory
import pytest

from django_snowid import decode
from tests.testapp.models import Customer, Product, Purchase, Shopper, Ticket

pytestmark = pytest.mark.django_db(transaction=True)


class ShopperFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Shopper

    name = factory.Faker("name")


class PurchaseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Purchase

    shopper = factory.SubFactory(ShopperFactory)


class TicketFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Ticket

    title = factory.Sequence(lambda n: f"ticket {n}")


def test_factories_leave_our_fields_to_issue_their_values(database_orders):
    purchases = PurchaseFactory.create_batch(3)
    field = Purchase._meta.get_field("number")
    assert [field.decode(p.number).shard for p in purchases] == [
        p.shopper_id % 16 for p in purchases
    ]
    assert len({p.number for p in purchases}) == 3
    ticket = TicketFactory()
    assert decode(ticket.public_id, layout="dc").node == decode(ticket.pk, layout="js").node
    assert decode(PurchaseFactory().shopper.pk).node == 3


def test_build_draws_nothing_and_create_batch_in_bulk(database_orders):
    built = PurchaseFactory.build(shopper=ShopperFactory())
    assert built.number is None and built.pk is None
    built.save()
    assert built.number is not None

    class CustomerFactory(factory.django.DjangoModelFactory):
        class Meta:
            model = Customer

    first, second = CustomerFactory.create_batch(2)
    assert second.number == first.number + 1
    assert decode(Product.objects.create().pk).node == 3
