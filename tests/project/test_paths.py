"""How many of our modules one ``create()`` walks through once everything is warm: a
reader following an insert meets few modules, each with one job."""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

import django_snowid
from django_snowid.core.layout import Layout
from django_snowid.ids.issuer import get_generator
from tests.testapp.models import Product, ShopOrder


def profiled(call: Callable[[], Any], profile: Callable[[Any, str, Any], None]) -> None:
    """``call()`` with ``profile`` told of every call and return (``sys.setprofile``)."""
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)


def modules_run(call: Callable[[], Any]) -> set[str]:
    """The modules of ``django_snowid`` whose Python code runs during ``call()``."""
    seen: set[str] = set()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            name = frame.f_globals.get("__name__", "")
            if name == "django_snowid" or name.startswith("django_snowid."):
                seen.add(name)

    profiled(call, profile)
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
    # kept with Django's private API), the state machine's outcome, and the process's
    # block. With Redis most numbers come from the block alone. (In the test's transaction
    # the database store reserves one number a call, on the host's clock: core.clocks,
    # never a clock a test moved.)
    assert len(modules) <= (5 if backend == "redis" else 10), sorted(modules)
    seen = (
        "django_snowid.orders.blocks" if backend == "redis" else "django_snowid.core.order_stream"
    )
    assert seen in modules  # the tracing sees them


@pytest.mark.django_db
def test_an_insert_with_a_snowflake_key_walks_through_four_modules_at_most(monkeypatch):
    Product.objects.create(name="tea")  # builds the generator
    # Inserts inside one tick (on a slow database each would start a tick of its own).
    now = time.time_ns()
    monkeypatch.setattr(get_generator(), "_clock", lambda: now)
    modules = warm_modules(lambda: Product.objects.create(name="tea"))
    # The field's base, the field, the issuer and the generator.
    assert len(modules) <= 4, sorted(modules)
    assert "django_snowid.core.generator" in modules


def layout_handoffs(
    call: Callable[[], Any], names: frozenset[str] = frozenset({"default"})
) -> list[str]:
    """The functions outside ``core.layout`` that hand a Layout (or a layout's name) to it
    during ``call()``: each is one visit of ``core/layout`` on that path."""
    seen: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call" or frame.f_globals.get("__name__") != "django_snowid.core.layout":
            return
        caller = frame.f_back
        module = caller.f_globals.get("__name__", "") if caller else ""
        if not module.startswith("django_snowid") or module == "django_snowid.core.layout":
            return
        arguments = inspect.getargvalues(caller)
        values = [arguments.locals[name] for name in arguments.args]
        if any(isinstance(v, Layout) or (isinstance(v, str) and v in names) for v in values):
            where = f"{module}.{caller.f_code.co_qualname}"
            if where not in seen:
                seen.append(where)

    profiled(call, profile)
    return seen


#: How many functions hand the layout to ``core.layout`` on a cold first id, per source.
HANDOFFS = {"static": 2, "database": 2, "slot": 2, "redis": 2}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "source",
    ["static", "database", "slot", pytest.param("redis", marks=pytest.mark.redis)],
    indirect=True,
)
def test_a_cold_first_id_hands_the_layout_over_few_times(source):
    handoffs = layout_handoffs(django_snowid.next_id)
    assert len(handoffs) <= HANDOFFS[source], handoffs
