"""SNOWID_REDIS_CLIENT_FACTORY: the client our Redis features use, and its checks."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError, SystemCheckError

from django_snowid.checks import check_redis_client
from django_snowid.exceptions import RedisClientError, SnowidError
from django_snowid.stores.redis_client import get_client

NOT_CALLABLE = 42
made: list[object] = []


def factory() -> object:
    import redis

    client = redis.Redis(host="127.0.0.1", port=1)  # never connected by these tests
    made.append(client)
    return client


@pytest.mark.parametrize(
    ("value", "check_id", "words"),
    [
        ("tests.stores.test_redis_client.missing", "django_snowid.E500", "cannot be imported"),
        ("no_such_module.factory", "django_snowid.E500", "cannot be imported"),
        (["a", "list"], "django_snowid.E500", "expected a dotted path"),
        ("tests.stores.test_redis_client.NOT_CALLABLE", "django_snowid.E501", "not a callable"),
    ],
)
def test_a_bad_factory_is_a_check_error(settings, value, check_id, words):
    settings.SNOWID_REDIS_CLIENT_FACTORY = value
    [message] = check_redis_client()
    assert message.id == check_id and words in message.msg
    with pytest.raises(SystemCheckError, match=check_id):
        call_command("check", databases=[])
    with pytest.raises(RedisClientError, match=words):
        get_client()


def test_the_factory_makes_the_client_once_per_settings(settings):
    settings.SNOWID_REDIS_CLIENT_FACTORY = "tests.stores.test_redis_client.factory"
    assert check_redis_client() == []
    made.clear()
    client = get_client()
    assert made == [client] and get_client() is client
    settings.SNOWID_REDIS_KEY_PREFIX = "other"  # a setting changed: made again
    assert get_client() is not client and len(made) == 2


def test_without_a_factory_the_django_redis_alias_is_used(settings):
    from django_redis import get_redis_connection

    settings.SNOWID_REDIS_CLIENT_FACTORY = None
    assert check_redis_client() == []
    assert get_client().connection_pool is get_redis_connection("snowid").connection_pool
    settings.SNOWID_REDIS_ALIAS = "default"  # a LocMemCache
    with pytest.raises(RedisClientError, match="not a django-redis cache"):
        get_client()


# ------------------------------------------------ what the errors call our Redis
def closed_port_client() -> object:
    """A client of a port nothing listens on."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    from tests.support import free_port

    # No retries: redis-py's default backs off for seconds before it gives up.
    return redis.Redis(
        host="127.0.0.1", port=free_port(), socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
    )


FACTORY = "tests.stores.test_redis_client.closed_port_client"


def _order_number() -> None:
    from tests.testapp.models import ShopOrder

    ShopOrder.objects.create(user_id=1)


def _order_recovery() -> None:
    call_command("snowid_recover", "testapp.ShopOrder", stdout=StringIO())


def _sequence_value() -> None:
    from django_snowid.sequences import next_value

    next_value("wording")


def _lease() -> None:
    from django_snowid import next_id

    next_id()


def _workers_command() -> None:
    call_command("snowid_workers", stdout=StringIO())


FEATURES = {
    "order number": _order_number,
    "order recovery": _order_recovery,
    "sequence value": _sequence_value,
    "worker-id lease": _lease,
    "snowid_workers": _workers_command,
}


@pytest.fixture
def unreachable_redis(settings):
    from tests.support import free_port, redis_caches

    settings.CACHES = redis_caches(f"redis://127.0.0.1:{free_port()}/0")
    settings.SNOWID_ORDER_BACKEND = "redis"
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    settings.SNOWID_WORKER_ID_SOURCE = "redis"


@pytest.mark.django_db
@pytest.mark.parametrize("feature", FEATURES)
@pytest.mark.parametrize("made_by", ["alias", "factory"])
def test_an_unreachable_redis_is_named_as_configured_and_said_once(
    settings, unreachable_redis, feature, made_by
):
    if made_by == "factory":
        settings.SNOWID_REDIS_CLIENT_FACTORY = FACTORY
    with pytest.raises((SnowidError, CommandError)) as info:
        FEATURES[feature]()
    message = str(info.value)
    assert message.count("unreachable") <= 1 and ".." not in message, message
    if made_by == "factory":
        assert f"SNOWID_REDIS_CLIENT_FACTORY {FACTORY!r}" in message, message
        assert "cache alias" not in message, message
    else:
        assert "cache alias 'snowid'" in message, message
