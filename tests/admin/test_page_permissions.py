"""The status page and the decode page each need a permission of their own: a staff user
without it gets a 403 and no entry on the admin index; with it (directly or through a
group), the page; a superuser has both."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.urls import reverse

from tests.support import page_permissions
from tests.testapp.models import Product

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("database_orders")]

PAGES = {"view_decode": "admin:snowid_decode", "view_status": "admin:snowid_status"}


def log_in(client, *codenames: str) -> User:
    user = User.objects.create_user("staff", password="pw", is_staff=True)
    user.user_permissions.set(page_permissions(*codenames))
    client.force_login(user)
    return user


def index_links(client) -> set[str]:
    html = client.get(reverse("admin:index")).content.decode()
    return {name for name, url in PAGES.items() if f'href="{reverse(url)}"' in html}


def test_staff_without_the_permissions_get_403_and_no_index_entry(client):
    log_in(client)
    for url in PAGES.values():
        assert client.get(reverse(url)).status_code == 403
    product = Product.objects.create(name="tea")
    assert client.post(reverse(PAGES["view_decode"]), {"ids": str(product.pk)}).status_code == 403
    assert index_links(client) == set()
    assert b"Decode ids and order numbers" not in client.get(reverse("admin:index")).content


@pytest.mark.parametrize("codename", PAGES)
def test_each_permission_opens_its_own_page_only(client, codename):
    log_in(client, codename)
    for name, url in PAGES.items():
        assert client.get(reverse(url)).status_code == (200 if name == codename else 403)
    assert index_links(client) == {codename}


def test_a_group_grants_them(client):
    user = log_in(client)
    operators = Group.objects.create(name="operators")
    operators.permissions.set(page_permissions(*PAGES))
    user.groups.add(operators)
    for url in PAGES.values():
        assert client.get(reverse(url)).status_code == 200
    assert index_links(client) == set(PAGES)


def test_superusers_have_both(admin_client):
    for url in PAGES.values():
        assert admin_client.get(reverse(url)).status_code == 200
    assert index_links(admin_client) == set(PAGES)


def test_inactive_staff_with_the_permissions_are_sent_to_the_login(client):
    user = log_in(client, *PAGES)
    user.is_active = False
    user.save()
    for url in PAGES.values():
        assert client.get(reverse(url)).status_code == 302
