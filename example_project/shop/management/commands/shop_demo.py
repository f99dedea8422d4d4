"""The example shop's main job: create sample rows and show their ids taken apart."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connection, transaction

import django_snowid
from django_snowid.core.layout import iso_utc
from shop.models import GiftCard, Invoice, Order, OrderLine, Product
from shop.routing import database_for_number

DEMO_USER, DEMO_PASSWORD = "admin", "admin"
#: The repository's root, where the printed commands are meant to be typed.
ROOT = Path(__file__).resolve().parents[4]
#: The demo's rows; a run that finds them (by the first order's note) creates nothing.
PRODUCTS = [("Green tea", 450), ("Black tea", 390), ("Teapot", 2900), ("Cups (4)", 1600)]
FIRST_NOTE, SECOND_NOTE, BULK_NOTE, CARD_CODE = (
    "first order",
    "second order",
    "bulk order ",
    "GIFT-",
)


class Command(BaseCommand):
    help = "Create sample products and orders, print their Snowflake ids decoded."

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        admin, created = User.objects.get_or_create(
            username=DEMO_USER, defaults={"is_staff": True, "is_superuser": True}
        )
        if created:
            admin.set_password(DEMO_PASSWORD)
            admin.save()

        customers = [
            User.objects.get_or_create(username=name)[0] for name in ("alice", "bob", "carol")
        ]

        first = Order.objects.filter(note=FIRST_NOTE).first()
        if first is None:
            products, order, second, more, cards, invoices = self._create(admin, customers)
        else:
            # A second run shows the rows of the first one instead of adding copies.
            self.stdout.write(
                "The demo rows exist already (an earlier run made them): nothing created."
            )
            products = list(Product.objects.filter(name__in=dict(PRODUCTS)).order_by("pk"))
            order = first
            second = Order.objects.filter(note=SECOND_NOTE).order_by("pk").first() or first
            more = list(Order.objects.filter(note__startswith=BULK_NOTE).order_by("pk"))
            cards = list(GiftCard.objects.filter(code__startswith=CARD_CODE).order_by("pk"))
            invoices = list(Invoice.objects.filter(order__in=(order, second)).order_by("pk"))

        self.stdout.write(self.style.MIGRATE_HEADING("Products (bulk_create):"))
        for product in products:
            self._show(f"  {product.name:<10}", product.pk)
        self.stdout.write(self.style.MIGRATE_HEADING("Orders (save / create):"))
        for each in (order, second):
            self._show(f"  {each.note:<12} id", each.pk)
            self._show(f"  {'':<12} public_id", each.public_id, layout="public")
        self.stdout.write(self.style.MIGRATE_HEADING("Gift cards (js53 ids, safe in JavaScript):"))
        for card in cards:
            self._show(f"  {card.code:<10}", card.pk, layout="public")
        self.stdout.write(
            self.style.MIGRATE_HEADING("Order numbers (yyMMddHHmmss + sequence + shard):")
        )
        field = Order._meta.get_field("number")
        for each in (order, second, *more):
            decoded = field.decode(each.number)
            self.stdout.write(
                f"  {each.note:<13} {each.number:>20}  stem={decoded.stem:012d} "
                f"sequence={decoded.sequence} shard={decoded.shard} "
                f"(user {each.user_id} % 16 = {each.user_id % 16}) -> database "
                f"{database_for_number(each.number)!r}"
            )

        self.stdout.write(self.style.MIGRATE_HEADING('Invoices (the daily "invoice" sequence):'))
        for invoice in invoices:
            self.stdout.write(f"  {invoice.code}  for the {invoice.order.note}")

        # The interpreter that runs this (make demo's .venv-demo, or any other).
        python = os.path.relpath(sys.executable, ROOT)
        self.stdout.write("")
        self.stdout.write(
            f"{Product.objects.count()} products and {Order.objects.count()} orders in "
            f"{os.path.relpath(connection.settings_dict['NAME'], ROOT)}.\n"
            "Take any id or order number apart:\n"
            f"  {python} example_project/manage.py snowid_decode {order.pk}\n"
            f"  {python} example_project/manage.py snowid_decode {order.number} "
            "--field shop.Order.number\n"
            "After restoring a database or losing the sequence store, before taking orders:\n"
            f"  {python} example_project/manage.py snowid_recover\n"
            "As JSON: http://127.0.0.1:8000/gift-cards.json (js53 ids as numbers) and "
            "http://127.0.0.1:8000/orders.json (64-bit ids as strings)\n"
            "Browse them in the admin:\n"
            f"  {python} example_project/manage.py runserver\n"
            f"  then open http://127.0.0.1:8000/admin/ and log in as {DEMO_USER} / "
            f"{DEMO_PASSWORD}\n"
            "  decode page: http://127.0.0.1:8000/admin/django_snowid/iddecoder/ - paste "
            f"{order.pk} and {order.number}"
        )

    def _create(self, admin: Any, customers: list[Any]) -> tuple[Any, ...]:
        with transaction.atomic():
            # bulk_create: the ids come back on every backend, no RETURNING needed.
            products = Product.objects.bulk_create(
                [Product(name=name, price_cents=price) for name, price in PRODUCTS]
            )
            # save(): one INSERT, the id was made in Python just before it.
            order = Order(user=admin, note=FIRST_NOTE)
            order.save()
            OrderLine.objects.bulk_create(
                [
                    OrderLine(order=order, product=products[0], quantity=2),
                    OrderLine(order=order, product=products[2]),
                ]
            )
            second = Order.objects.create(user=customers[0], note=SECOND_NOTE)
            # bulk_create through OrderNumberQuerySet: one reservation for the whole block.
            more = Order.objects.bulk_create(
                [
                    Order(user=customer, note=f"{BULK_NOTE}{i}")
                    for i, customer in enumerate(customers, start=1)
                ]
            )
            # js53 ids (below 2**53): a browser's JSON.parse keeps them exact.
            cards = GiftCard.objects.bulk_create(
                [GiftCard(code=f"{CARD_CODE}{i}", balance_cents=2500) for i in range(1, 4)]
            )
            # A named sequence: 1, 2, ... within the day, in this transaction (no gaps).
            invoices = [Invoice.objects.create(order=each) for each in (order, second)]
        return products, order, second, more, cards, invoices

    def _show(self, label: str, value: int, layout: str | None = None) -> None:
        decoded = django_snowid.decode(value, layout=layout)
        parts = ", ".join(f"{k}={v}" for k, v in decoded.parts.items())
        when = iso_utc(decoded.time, milliseconds=True)
        self.stdout.write(f"{label} {value:>20}  made {when}  {parts}, sequence={decoded.sequence}")
