"""Connections of our own (``django_snowid.db.connections``): kept per thread and database
between uses, as Django keeps a request's connection within the request."""

from __future__ import annotations

import pytest
from django.db import connection, connections

from django_snowid.db.connections import close_own_connections, own_connection

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def max_age():
    """Sets the database's CONN_MAX_AGE for the connections made after it."""
    saved = connections.databases[connection.alias]["CONN_MAX_AGE"]
    close_own_connections()

    def set_to(seconds: int | None) -> None:
        connections.databases[connection.alias]["CONN_MAX_AGE"] = seconds

    yield set_to
    connections.databases[connection.alias]["CONN_MAX_AGE"] = saved
    close_own_connections()


def _opened() -> object:
    own = own_connection(connection.alias)
    own.ensure_connection()
    return own.connection


def test_a_thread_s_own_connection_is_kept_under_django_s_default_max_age(max_age):
    """CONN_MAX_AGE = 0 closes a request's connection at its end; ours serves no request,
    and connecting again at each use (a sequence's mark raised) costs milliseconds."""
    max_age(0)
    first = _opened()
    assert _opened() is first


def test_a_thread_s_own_connection_older_than_a_max_age_is_opened_again(max_age):
    max_age(60)
    first = _opened()
    assert _opened() is first
    own_connection(connection.alias).close_at = 0  # sixty seconds later
    assert _opened() is not first


def _server_side_id(own) -> int:
    cursor = own.cursor()
    cursor.execute(
        "SELECT pg_backend_pid()" if own.vendor == "postgresql" else "SELECT CONNECTION_ID()"
    )
    return int(cursor.fetchone()[0])


def test_a_kept_connection_the_server_ended_is_opened_again_before_use(max_age):
    """Kept past Django's default, it is checked before each use (a round trip where a
    new connection costs milliseconds): a server that restarted or dropped it idle costs
    no refusal."""
    from django_snowid.db.private import kept_cursor

    if connection.vendor == "sqlite":
        pytest.skip("SQLite has no server to end a connection")
    max_age(0)
    own = own_connection(connection.alias)
    own.ensure_connection()
    ended = _server_side_id(own)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_terminate_backend(%s)", [ended])
        else:
            cursor.execute(f"KILL {ended}")
    cursor = kept_cursor(own_connection(connection.alias))
    cursor.execute("SELECT 1")
    assert cursor.fetchone()[0] == 1
    assert _server_side_id(own) != ended
