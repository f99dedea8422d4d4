"""SNOWID_REDIS_CLIENT_FACTORY: the client our Redis features use, and its checks."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from django_snowid.checks import check_redis_client
from django_snowid.exceptions import RedisClientError
from django_snowid.redis.client import get_client

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
        ("tests.test_redis_client.missing", "django_snowid.E500", "cannot be imported"),
        ("no_such_module.factory", "django_snowid.E500", "cannot be imported"),
        (["a", "list"], "django_snowid.E500", "expected a dotted path"),
        ("tests.test_redis_client.NOT_CALLABLE", "django_snowid.E501", "not a callable"),
    ],
)
def test_a_bad_factory_is_a_check_error(settings, value, check_id, words):
    settings.SNOWID_REDIS_CLIENT_FACTORY = value
    [message] = check_redis_client()
    assert message.id == check_id and words in message.msg
    with pytest.raises(SystemCheckError, match=check_id):
        call_command("check")
    with pytest.raises(RedisClientError, match=words):
        get_client()


def test_the_factory_makes_the_client_once_per_settings(settings):
    settings.SNOWID_REDIS_CLIENT_FACTORY = "tests.test_redis_client.factory"
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
