"""How many of our modules one ``create()`` walks through once everything is warm: a
reader following an insert meets few modules, each with one job."""

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


def warm_modules(call: Callable[[], Any]) -> set[str]:
    """The modules of a warm ``call()``: the smallest set of three calls after a first.

    Once a second an order-number issuer renders the stem of its new second
    (``core.order_format``); the other calls of that second reuse it.
    """
    call()  # the first call builds the generator, the issuer, the store, the client
    return min((modules_run(call) for _ in range(3)), key=len)


@pytest.mark.django_db
def test_an_insert_with_an_order_number_walks_through_few_modules(backend):
    modules = warm_modules(lambda: ShopOrder.objects.create(user_id=7))
    # The field, its base, the INSERT retry, the issuer, the store, how the store talks to
    # its server (a Redis script runner; one statement returning one integer, on a cursor
    # kept with Django's private API) and the state machine's outcome.
    assert len(modules) <= (7 if backend == "redis" else 8), sorted(modules)
    assert "django_snowid.core.order_stream" in modules  # the tracing sees them


@pytest.mark.django_db
def test_an_insert_with_a_snowflake_key_walks_through_five_modules_at_most():
    modules = warm_modules(lambda: Product.objects.create(name="tea"))
    assert len(modules) <= 5, sorted(modules)
    assert "django_snowid.core.generator" in modules
