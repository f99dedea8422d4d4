"""The commands given what a person mistypes: a clear refusal (``CommandError``, exit 2
for bad input), never a traceback, a silent run or a wrong word; input echoed short."""

from __future__ import annotations

import json
from dataclasses import replace
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from django_snowid.settings_layouts import get_layout
from tests.support import manage_in_subprocess
from tests.testapp.models import ShopOrder

pytestmark = pytest.mark.django_db

LONG = "x" * 10_000


def run(name: str, *args: str) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def refusal(name: str, *args: str) -> str:
    """The message of the ``CommandError`` the command refuses with."""
    with pytest.raises(CommandError) as caught:
        run(name, *args)
    return str(caught.value)


# ------------------------------------------------------------------------ snowid_audit
def test_audit_takes_a_model_label_in_any_case(settings):
    settings.SNOWID_ORDER_BACKEND = "database"
    ShopOrder.objects.create(user_id=1)
    lower = json.loads(run("snowid_audit", "testapp.shoporder", "--json"))
    exact = json.loads(run("snowid_audit", "testapp.ShopOrder", "--json"))
    assert lower["fields"] == exact["fields"] == ["testapp.ShopOrder.number"]
    upper = json.loads(run("snowid_audit", "--model", "testapp.SHOPORDER", "--json"))
    assert upper["fields"] == exact["fields"]


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e300"])
def test_audit_refuses_a_tolerance_that_is_no_number_of_seconds(value):
    message = refusal("snowid_audit", f"--tolerance={value}")
    assert "--tolerance" in message and repr(value) in message


def test_audit_with_an_infinite_tolerance_exits_2_without_a_traceback():
    done = manage_in_subprocess("snowid_audit", "--tolerance", "inf", "--skip-checks")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--tolerance" in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("snowid_audit", f"testapp.{LONG}"),
        ("snowid_audit", "--database", LONG),
        ("snowid_decode", "1", "--layout", LONG),
        ("snowid_decode", LONG),
        ("snowid_recover", "--database", LONG),
        ("snowid_database_ids", "--database", LONG),
        ("snowid_sequences", "--raise", LONG, "--by", "5"),
        ("snowid_sequences", "--database", LONG),
        ("snowid_sequences", "--import-django-sequences", "--table", LONG),
    ],
    ids=lambda args: " ".join(a[:12] for a in args),
)
def test_long_input_is_echoed_short(args):
    message = refusal(*args)
    assert "characters)" in message and len(message) < 400, message[:400]


# -------------------------------------------------------------------- snowid_sequences
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)  # the mark is written on a connection of its own
def test_raising_a_mark_past_the_largest_value_is_refused(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "redis"
    message = refusal("snowid_sequences", "--raise", "invoices", "--by", str(10**30))
    assert "--by" in message and "2**63 - 1" in message  # argparse: above the largest
    settings.SNOWID_SEQUENCES = {}
    run("snowid_sequences", "--raise", "invoices", "--by", "5")
    message = refusal("snowid_sequences", "--raise", "invoices", "--by", str(2**63 - 2))
    assert "would pass 2**63 - 1" in message


def test_raise_without_by_says_by_is_needed():
    message = refusal("snowid_sequences", "--raise", "invoices")
    assert "--raise NAME needs --by N" in message and "None" not in message


def test_by_in_scientific_notation_is_refused_as_bad_input():
    assert "--by" in refusal("snowid_sequences", "--raise", "invoices", "--by", "1e30")


@pytest.mark.parametrize(
    "args",
    [
        ("--import-django-sequences", "--database", "nope"),
        ("--database", "nope"),
        ("--serve", "--rounds", "1", "--database", "nope"),
    ],
)
def test_an_unknown_database_is_refused(args):
    assert "--database 'nope' is not in DATABASES" in refusal("snowid_sequences", *args)


@pytest.mark.parametrize(
    "args",
    [("--interval", "-1"), ("--interval", "nan"), ("--interval", "inf"), ("--rounds", "-1")],
)
def test_serve_refuses_an_interval_or_rounds_it_cannot_keep(args):
    message = refusal("snowid_sequences", "--serve", *args)
    assert args[0] in message


@pytest.fixture
def legacy_table():
    """Creates ``legacy_sequences`` by the SQL it is given; dropped afterwards (MariaDB's
    DDL commits, so the test's rollback would keep it)."""

    def execute(sql: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(sql)

    yield execute
    execute("DROP TABLE IF EXISTS legacy_sequences")


@pytest.mark.parametrize(
    "columns, rows, expected",
    [
        ("name VARCHAR(100)", "('invoices')", "no column 'last'"),
        ("name VARCHAR(100), last BIGINT", "('invoices', NULL)", "'invoices': last is None"),
        ("name VARCHAR(100), last BIGINT", "(NULL, 7)", "None: not a name"),
        ("name VARCHAR(100), last BIGINT", "('', 7)", "'' (0 characters): not a name"),
        ("name VARCHAR(100), last BIGINT", "('invoices', -3)", "'invoices': last is -3"),
    ],
)
def test_import_refuses_a_table_it_cannot_carry_over_and_writes_nothing(
    legacy_table, columns, rows, expected
):
    from django_snowid.sequences.models import SequenceMark

    legacy_table(f"CREATE TABLE legacy_sequences ({columns})")
    legacy_table(f"INSERT INTO legacy_sequences VALUES {rows}")
    message = refusal(
        "snowid_sequences", "--import-django-sequences", "--table", "legacy_sequences"
    )
    assert expected in message
    assert list(SequenceMark.objects.values_list("name", flat=True)) == []


def test_import_refuses_names_our_sequences_cannot_hold_and_echoes_them_short(legacy_table):
    from django_snowid.sequences.models import SequenceMark

    legacy_table("CREATE TABLE legacy_sequences (name VARCHAR(200), last BIGINT)")
    legacy_table(f"INSERT INTO legacy_sequences VALUES ('{'n' * 150}', 3), ('fine', 4)")
    message = refusal(
        "snowid_sequences", "--import-django-sequences", "--table", "legacy_sequences"
    )
    assert "150 characters" in message and len(message) < 400
    assert list(SequenceMark.objects.values_list("name", flat=True)) == []


# ---------------------------------------------------------------------- snowid_recover
@pytest.mark.parametrize(
    "label, suggested",
    [
        ("testapp.ShopOrder.number", "testapp.ShopOrder"),
        ("testapp.shoporder.number", "testapp.ShopOrder"),
    ],
)
def test_recover_given_a_field_names_its_model(label, suggested):
    message = refusal("snowid_recover", label)
    assert f"Did you mean {suggested}?" in message
    assert "--above takes app_label.Model.field" in message  # the option that takes one


# ---------------------------------------------------------------------- snowid_workers
def test_a_released_or_expired_lease_says_so_not_a_negative_expiry():
    from django_snowid.workers.stores.base import LeaseInfo, expires_in_s

    now = 1_800_000_000_000
    lease = LeaseInfo("default", 3, "host:1", now - 60_000, now + 2_500, now)
    assert expires_in_s(lease, now) == 2.5
    assert expires_in_s(replace(lease, expires_ms=0), now) == "released"
    assert expires_in_s(replace(lease, expires_ms=now - 4_000), now) == "expired 4.0 s ago"


def test_workers_all_shows_a_released_lease_as_released(settings):
    from django_snowid.workers.lease import release_all
    from django_snowid.workers.leased import lease_generator

    if connection.vendor == "sqlite":
        pytest.skip("SQLite keeps the database source's leases beside its file")
    settings.SNOWID_WORKER_ID_SOURCE = "database"
    node = lease_generator(get_layout("default"), 0, "database", heartbeat=False).node
    release_all()
    rows = json.loads(run("snowid_workers", "--json", "--all"))
    (row,) = [r for r in rows if r["worker_id"] == node and not r["owner"].startswith("database:")]
    assert row["expires_in_s"] == "released"
