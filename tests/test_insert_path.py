"""How many of our modules one ``create()`` walks through once everything is warm: a
reader following an insert should meet few modules, each with one job."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from tests.testapp.models import Product, ShopOrder


def modules_run(call: Callable[[], Any]) -> set[str]:
    """The modules of ``django_snowid`` whose Python code runs during ``call()``."""
    seen: set[str] = set()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            name = frame.f_globals.get("__name__", "")
            if name == "django_snowid" or name.startswith("django_snowid."):
                seen.add(name)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


@pytest.mark.django_db
@pytest.mark.parametrize("backend", [pytest.param("redis", marks=pytest.mark.redis), "database"])
def test_an_order_number_insert_walks_through_seven_modules_at_most(backend, settings):
    settings.SNOWID_ORDER_BACKEND = backend
    ShopOrder.objects.create(user_id=7)  # the first call builds the issuer and the store
    modules = modules_run(lambda: ShopOrder.objects.create(user_id=7))
    print(backend, len(modules), sorted(modules))
    assert len(modules) <= 7, sorted(modules)


@pytest.mark.django_db
def test_a_snowflake_key_insert_walks_through_five_modules_at_most():
    Product.objects.create(name="first")
    modules = modules_run(lambda: Product.objects.create(name="second"))
    print(len(modules), sorted(modules))
    assert len(modules) <= 5, sorted(modules)
