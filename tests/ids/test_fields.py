from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from django import forms
from django.core.management import call_command
from django.db import connection, models
from django.db.migrations.writer import MigrationWriter
from django.test.utils import CaptureQueriesContext, isolate_apps

import django_snowid
from django_snowid.fields import OrderNumberField, SnowflakeAutoField, SnowflakeField
from django_snowid.sequences.fields import SequenceField, SequenceTextField
from django_snowid.settings_layouts import get_layout
from tests.testapp.models import Product, Review, Ticket

pytestmark = pytest.mark.django_db


def _near_now(value: int, layout=None) -> bool:
    decoded = get_layout(layout).decode(value)
    return abs(datetime.now(timezone.utc) - decoded.time) < timedelta(seconds=5)


def test_save_assigns_a_snowflake_pk_with_one_insert():
    product = Product(name="tea")
    assert product.pk is None  # nothing is allocated before save()
    with CaptureQueriesContext(connection) as queries:
        product.save()
    statements = [q["sql"].split()[0].upper() for q in queries.captured_queries]
    assert statements == ["INSERT"], queries.captured_queries
    assert "RETURNING" not in queries.captured_queries[0]["sql"].upper()
    assert product.pk > 2**40 and _near_now(product.pk)
    assert django_snowid.decode(product.pk).parts == {"worker": 3}
    assert Product.objects.get(pk=product.pk).name == "tea"


def test_saving_again_updates():
    product = Product.objects.create(name="tea")
    pk = product.pk
    product.name = "green tea"
    product.save()
    assert product.pk == pk
    assert Product.objects.get().name == "green tea"


def test_create_ids_increase():
    pks = [Product.objects.create(name=str(i)).pk for i in range(20)]
    assert pks == sorted(set(pks))
    assert list(Product.objects.order_by("pk").values_list("pk", flat=True)) == pks


def test_bulk_create_returns_primary_keys_on_every_backend():
    products = Product.objects.bulk_create(
        [Product(name=f"p{i}") for i in range(2500)], batch_size=1000
    )
    pks = [p.pk for p in products]
    assert None not in pks
    assert pks == sorted(set(pks))
    assert set(Product.objects.values_list("pk", flat=True)) == set(pks)
    reviews = Review.objects.bulk_create([Review(product=p) for p in products[:10]])
    assert all(r.pk for r in reviews)
    assert Review.objects.filter(product__in=products[:10]).count() == 10


def test_explicit_pk_is_kept():
    Product.objects.create(pk=12345, name="legacy")
    assert Product.objects.get(pk=12345).name == "legacy"


def test_second_layout_and_non_pk_field():
    ticket = Ticket.objects.create(title="help")
    assert ticket.pk < 2**53  # the "js" layout: safe as a JavaScript number
    assert _near_now(ticket.pk, "js")
    assert _near_now(ticket.public_id, "dc")
    assert get_layout("dc").decode(ticket.public_id).parts == {"datacenter": 0, "machine": 3}
    tickets = Ticket.objects.bulk_create([Ticket(), Ticket(public_id=77)])
    assert tickets[1].public_id == 77
    assert tickets[0].public_id and tickets[0].public_id != ticket.public_id


def test_filter_by_creation_time_through_the_primary_key():
    layout = get_layout()
    before = Product.objects.create(name="before")
    start = datetime.now(timezone.utc) + timedelta(milliseconds=2)
    while datetime.now(timezone.utc) < start + timedelta(milliseconds=2):
        pass
    after = Product.objects.create(name="after")
    found = Product.objects.filter(pk__gte=layout.min_id_at(start))
    assert list(found) == [after]
    assert list(
        Product.objects.filter(pk__lte=layout.max_id_at(start - timedelta(milliseconds=1)))
    ) == [before]


def test_column_is_a_plain_bigint():
    table = Product._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT data_type, is_identity, column_default FROM information_schema.columns "
                "WHERE table_name = %s AND column_name = 'id'",
                [table],
            )
            assert cursor.fetchone() == ("bigint", "NO", None)
        elif connection.vendor == "mysql":
            cursor.execute(
                "SELECT data_type, extra, column_default FROM information_schema.columns "
                "WHERE table_schema = DATABASE() AND table_name = %s AND column_name = 'id'",
                [table],
            )
            data_type, extra, default = cursor.fetchone()
            assert data_type == "bigint" and "auto_increment" not in extra.lower()
            assert default is None
        else:
            cursor.execute("SELECT sql FROM sqlite_master WHERE name = %s", [table])
            sql = cursor.fetchone()[0]
            assert '"id" bigint NOT NULL PRIMARY KEY' in sql and "AUTOINCREMENT" not in sql


def test_foreign_keys_to_it_are_bigint():
    field = Review._meta.get_field("product")
    assert field.db_type(connection) == SnowflakeField().db_type(connection)


def test_no_migration_changes():
    # makemigrations --check exits non-zero when a model differs from its migrations
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_not_in_model_forms():
    class TicketForm(forms.ModelForm):
        class Meta:
            model = Ticket
            fields = "__all__"  # noqa: DJ007  (proves what the form leaves out)

    assert list(TicketForm().fields) == ["title"]


@pytest.mark.parametrize(
    "field",
    [
        SnowflakeField(),
        SnowflakeField(unique=False, editable=True, layout="js"),
        SnowflakeField(primary_key=True),
        SnowflakeAutoField(primary_key=True),
        SnowflakeAutoField(primary_key=True, layout="dc"),
    ],
)
def test_deconstruct_round_trip(field):
    name, path, args, kwargs = field.deconstruct()
    assert path.startswith("django_snowid.fields.")
    assert "default" not in kwargs
    clone = type(field)(*args, **kwargs)
    assert clone.deconstruct() == (name, path, args, kwargs)
    assert (clone.unique, clone.editable, clone.layout_name) == (
        field.unique,
        field.editable,
        field.layout_name,
    )


def test_snowflake_field_defaults():
    field = SnowflakeField()
    assert field.unique and not field.editable
    assert field.deconstruct()[3] == {}


def test_many_to_many_tables_of_every_app_accept_rows():
    """Auto-created through tables get DEFAULT_AUTO_FIELD in migrations, whatever the
    app's default_auto_field; they must still accept the rows the running models write."""
    from django.contrib.auth.models import Permission, User

    from tests.testapp.models import Tag

    user = User.objects.create_user("u")
    perms = list(Permission.objects.all()[:3])
    user.user_permissions.add(*perms)  # auth's through model has an AutoField pk
    assert user.user_permissions.count() == 3
    tag = Tag.objects.create(name="green")
    products = Product.objects.bulk_create([Product(name="a"), Product(name="b")])
    tag.products.add(*products)  # ours: Snowflake ids given by the running model
    assert set(tag.products.all()) == set(products)
    assert products[0].tags.get() == tag


def test_a_bulk_of_values_set_by_hand_reaches_the_driver_as_one_type():
    """0 and negative values take Django's preparation, positive ones skip it: a column's
    values must still reach the driver as one type (psycopg 3 refuses an array of
    ``Int8`` and small ``int``, PostgreSQL's bulk_create)."""
    from tests.feedapp.models import Entry

    entries = Entry.objects.bulk_create([Entry(loose=value) for value in (0, 1, -7, 2)])
    entries += Entry.objects.bulk_create([Entry(), Entry()])  # and values made
    stored = dict(Entry.objects.values_list("pk", "loose"))
    assert [stored[e.pk] for e in entries] == [0, 1, -7, 2, entries[4].loose, entries[5].loose]
    assert entries[5].loose > entries[4].loose > 2


def test_dumpdata_and_loaddata_keep_the_ids(tmp_path):
    """loaddata resets the sequences of AutoFields afterwards (PostgreSQL: setval on
    pg_get_serial_sequence); our plain bigint has none, and that must stay harmless."""
    product = Product.objects.create(name="tea")
    review = Review.objects.create(product=product, text="good")
    fixture = tmp_path / "shop.json"
    call_command("dumpdata", "testapp.Product", "testapp.Review", output=str(fixture))
    Review.objects.all().delete()
    Product.objects.all().delete()
    call_command("loaddata", str(fixture), verbosity=0)
    assert Review.objects.get(pk=review.pk).product_id == product.pk
    newer = Product.objects.create(name="coffee")
    assert newer.pk > product.pk
    assert Product.objects.count() == 2


def test_pks_follow_a_change_of_the_worker_settings(settings):
    """The field keeps its generator between rows; a settings change must replace it."""
    layout = get_layout()
    assert layout.decode(Product.objects.create(name="a").pk).parts["worker"] == 3
    settings.SNOWID_WORKER_ID = 9
    assert layout.decode(Product.objects.create(name="b").pk).parts["worker"] == 9
    objs = Product.objects.bulk_create([Product(name="c"), Product(name="d")])
    assert {layout.decode(o.pk).parts["worker"] for o in objs} == {9}


# ------------------------------------------------------------------ field checks
# Models declared in an isolated registry: their checks run without touching the
# installed apps, and the test leaves no model behind.


def _field_check_ids(model: type[models.Model]) -> list[str]:
    return [m.id for m in model.check() if m.id and m.id.startswith("django_snowid")]


@isolate_apps("tests.testapp")
@pytest.mark.parametrize(
    "field_class, field_kwargs, expected",
    [
        (SnowflakeField, {"layout": "nowhere"}, ["django_snowid.E101"]),
        # js53 has no shard bits
        (SnowflakeField, {"layout": "js", "shard_from": "user_id"}, ["django_snowid.E400"]),
        (SnowflakeField, {"layout": "sharded", "shard_from": "owner"}, ["django_snowid.E201"]),
        (SnowflakeField, {"layout": "sharded", "shard_from": "user_id"}, []),
        (OrderNumberField, {"shard_from": "owner"}, ["django_snowid.E201"]),
        (OrderNumberField, {"shard_from": "user_id", "packing": "hex"}, ["django_snowid.E202"]),
        (OrderNumberField, {"shard_from": "user_id", "zone": "UTC"}, []),
        # "tiny" is the stream of testapp.TinyOrder, whose format differs (sequence_bits=3)
        (OrderNumberField, {"shard_from": "user_id", "stream": "tiny"}, ["django_snowid.E204"]),
    ],
)
def test_field_checks(field_class, field_kwargs, expected):
    class Thing(models.Model):
        user_id = models.IntegerField()
        ref = field_class(**field_kwargs)

        class Meta:
            app_label = "testapp"

    assert _field_check_ids(Thing) == expected


# ------------------------------------------------------------------ migrations
@pytest.mark.parametrize(
    "field",
    [
        SnowflakeField(),
        SnowflakeField(unique=False, editable=True, layout="js"),
        SnowflakeField(layout="sharded", shard_from="user_id", null=True),
        SnowflakeAutoField(primary_key=True),
        SnowflakeAutoField(primary_key=True, layout="sharded", shard_from="user_id"),
        OrderNumberField(shard_from="user_id", packing="decimal", stream="s"),
        SequenceField(sequence="customer", unique=True),
        SequenceTextField(sequence="invoice", template="I-{value:04d}", max_length=12),
    ],
    ids=lambda field: type(field).__name__,
)
def test_migration_writer_round_trip(field):
    # What a migration file holds: the source MigrationWriter writes, run again.
    source, imports = MigrationWriter.serialize(field)
    namespace: dict[str, object] = {}
    exec("\n".join(sorted(imports)), namespace)
    clone = eval(source, namespace)
    assert type(clone) is type(field)
    assert clone.deconstruct() == field.deconstruct()
    assert MigrationWriter.serialize(clone) == (source, imports)


def test_makemigrations_writes_nothing_for_our_fields(tmp_path):
    # The fields' migrations as written, read back: no change detected (twice).
    for _ in range(2):
        call_command("makemigrations", "--check", "--dry-run", verbosity=0)
