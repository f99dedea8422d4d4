"""A store that is down, seen from a request: the admin's add page shows a form error and
the API answers 503 with ``Retry-After``; nothing is saved. Redis is a throwaway server
of the test's own, stopped."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from django_snowid.exceptions import (
    ClockMovedBackwards,
    InvalidId,
    OrderNumberUnavailable,
    SequenceUnavailable,
)
from tests.testapp.models import Purchase, ShopOrder, Shopper

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture
def redis_down(throwaway_redis):
    """Order numbers in a Redis that has stopped."""
    caches = throwaway_redis.caches()
    throwaway_redis.stop()
    with override_settings(CACHES=caches, SNOWID_ORDER_BACKEND="redis"):
        yield


def test_the_admin_add_page_shows_a_form_error_and_saves_nothing(admin_client, redis_down):
    admin_client.raise_request_exception = False
    response = admin_client.post("/admin/testapp/shoporder/add/", {"user_id": "5"})
    assert response.status_code == 200, response.status_code
    errors = response.context["adminform"].form.non_field_errors()
    assert len(errors) == 1
    assert "Redis" in errors[0] and "Nothing was saved" in errors[0]
    assert ShopOrder.objects.count() == 0


def test_the_admin_change_page_of_another_row_still_saves(admin_client, redis_down):
    order = ShopOrder(user_id=3, number=1)  # a number set by hand: nothing to draw
    order.save()
    response = admin_client.post(f"/admin/testapp/shoporder/{order.pk}/change/", {"user_id": "4"})
    assert response.status_code == 302
    order.refresh_from_db()
    assert order.user_id == 4


@pytest.mark.django_db(transaction=True)  # as a request in autocommit: the test's own
# transaction would be marked for rollback by the refused save (Django's save_base)
def test_an_api_post_gets_a_json_503_with_retry_after(client, redis_down):
    shopper = Shopper.objects.create(name="ada")
    client.raise_request_exception = False
    response = client.post(
        "/api/purchases/", json.dumps({"shopper": str(shopper.pk)}), content_type="application/json"
    )
    assert response.status_code == 503, response.content[:200]
    assert response["Content-Type"].startswith("application/json")
    assert int(response["Retry-After"]) >= 1
    detail = response.json()["detail"]
    assert detail.startswith("No order number can be issued right now: nothing was saved.")
    assert "127.0.0.1" not in detail  # the servers behind it are the operators' business
    assert Purchase.objects.count() == 0


@pytest.mark.parametrize(
    "refusal, wait, what",
    [
        (OrderNumberUnavailable("Redis is unreachable"), 1, "No order number"),
        (ClockMovedBackwards(behind_ms=2500, tolerance_ms=5), 3, "No id"),
        (SequenceUnavailable("down"), 1, "No sequence value"),
    ],
)
def test_the_exception_handler_answers_any_view_with_a_503(refusal, wait, what):
    from django_snowid.drf import exception_handler

    response = exception_handler(refusal, {})
    assert response.status_code == 503 and response["Retry-After"] == str(wait)
    assert response.data["detail"].startswith(f"{what} can be issued right now")
    assert exception_handler(InvalidId("not ours"), {}) is None  # a bug stays a 500
