"""The app's two tables, and two admin index entries that have no table. (Named sequences
have their own app and migrations: ``django_snowid.sequences``.)

The lease table may exist before this migration runs: ``pre_migrate`` creates it, in this
shape, so that ``migrate`` itself can lease a worker id (django_migrations' rows take
``DEFAULT_AUTO_FIELD``)."""

from django.db import migrations, models

from django_snowid.db.tables import CreateModelIfMissing


def admin_page(name, verbose_name, index_entry):
    """An unmanaged model without a table: it gives one admin page its place on the index."""
    return migrations.CreateModel(
        name=name,
        fields=[
            (
                "id",
                models.BigAutoField(
                    auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                ),
            ),
        ],
        options={
            "verbose_name": verbose_name,
            "verbose_name_plural": index_entry,
            "managed": False,
            "default_permissions": (),
        },
    )


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="OrderStreamState",
            fields=[
                ("name", models.CharField(max_length=200, primary_key=True, serialize=False)),
                ("second", models.BigIntegerField()),
                ("sequence", models.BigIntegerField()),
            ],
            options={"verbose_name": "order-number stream"},
        ),
        CreateModelIfMissing(
            name="WorkerLease",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("pool", models.CharField(max_length=200)),
                ("worker", models.IntegerField()),
                ("owner", models.CharField(max_length=200)),
                ("token", models.CharField(max_length=64)),
                ("acquired_ms", models.BigIntegerField()),
                ("expires_ms", models.BigIntegerField()),
                ("horizon_ms", models.BigIntegerField(default=-1)),
                ("layout", models.CharField(blank=True, default="", max_length=200)),
            ],
            options={
                "verbose_name": "worker-id lease",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("pool", "worker"), name="django_snowid_one_lease"
                    )
                ],
            },
        ),
        admin_page("IdDecoder", "id decoder", "Decode ids and order numbers"),
        admin_page("StoreStatus", "store status", "Status of streams, leases and sequences"),
    ]
