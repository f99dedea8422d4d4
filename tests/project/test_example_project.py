"""The example project's main job runs, and its router sends orders to their user's shard."""

from __future__ import annotations

import re

import pytest

from tests.support import manage


@pytest.mark.slow
def test_demo_runs_twice_and_recovery_finds_nothing_to_do(tmp_path):
    db = tmp_path / "shop.sqlite3"
    assert manage("migrate", "--noinput", db=db).returncode == 0
    first = manage("shop_demo", db=db)
    assert first.returncode == 0, first.stderr
    assert "log in as admin / admin" in first.stdout
    assert "-> database 'default'" in first.stdout
    assert "4 products and 5 orders" in first.stdout
    day = re.search(r"stem=(\d{6})", first.stdout)[1]  # the orders' day, yyMMdd
    assert f"INV-20{day}-000001  for the first order" in first.stdout
    assert f"INV-20{day}-000002  for the second order" in first.stdout
    second = manage("shop_demo", db=db)  # a second run creates nothing and says so
    assert second.returncode == 0, second.stderr
    assert "nothing created" in second.stdout and "nothing created" not in first.stdout
    assert "4 products and 5 orders" in second.stdout
    # ... and shows the first run's rows again, the same ids and numbers.
    assert (
        second.stdout.split("Products (bulk_create):")[1]
        == (first.stdout.split("Products (bulk_create):")[1])
    )
    recovered = manage("snowid_recover", db=db)
    assert recovered.returncode == 0 and "unchanged" in recovered.stdout
    check = manage("makemigrations", "--check", "--dry-run", db=db)
    assert check.returncode == 0, check.stdout


def test_recovery_reads_every_shard_of_the_example_router(tmp_path):
    code = (
        "from django.test import override_settings\n"
        "from shop.models import Order\n"
        "from django_snowid.orders.recovery import databases_for\n"
        "with override_settings(SHOP_ORDER_SHARDS=['default', 'east', 'west']):\n"
        "    print(databases_for(Order))\n"
    )
    result = manage("shell", "-c", code, db=tmp_path / "shop.sqlite3")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "['default', 'east', 'west']"


def test_order_numbers_in_redis_use_a_cache_alias_of_their_own(tmp_path):
    """As the Quick start shows: the project's default cache stays a local one, the
    numbers go through the "snowid" alias (read, not used: no Redis is needed)."""
    code = (
        "from django.conf import settings\n"
        "from django_snowid.conf import conf\n"
        "print(settings.CACHES['default']['BACKEND'], conf.REDIS_ALIAS,\n"
        "      settings.CACHES[conf.REDIS_ALIAS]['LOCATION'], conf.ORDER_BACKEND)\n"
    )
    url = "redis://127.0.0.1:6379/0"
    result = manage("shell", "-c", code, db=tmp_path / "shop.sqlite3", redis_url=url)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-4:] == [
        "django.core.cache.backends.locmem.LocMemCache",
        "snowid",
        url,
        "redis",
    ]


def test_the_admins_view_site_link_opens_a_page(tmp_path):
    """The admin's "View site" goes to the site's root: a page that links to the JSON
    views and the admin, not a 404."""
    db = tmp_path / "shop.sqlite3"
    assert manage("migrate", "--noinput", db=db).returncode == 0
    code = (
        "from django.contrib import admin\n"
        "from django.test import Client\n"
        "home = Client(HTTP_HOST='localhost').get(admin.site.site_url)\n"
        "print(home.status_code, *sorted(set(__import__('re').findall("
        'r\'href="([^"]+)"\', home.content.decode()))))\n'
    )
    result = manage("shell", "-c", code, db=db)
    assert result.returncode == 0, result.stderr
    status, *links = result.stdout.strip().splitlines()[-1].split()
    assert status == "200", result.stdout
    assert {"/admin/", "/orders.json", "/gift-cards.json"} <= set(links)
