"""The app's three tables, and two admin index entries that have no table.

Development trees before the first release built this schema in five steps. ``replaces``
names them, so that a database that applied all five (a demo database, say) takes this
migration as applied instead of creating its tables again.
"""

from django.db import migrations, models


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

    replaces = [
        ("django_snowid", "0001_order_stream_state"),
        ("django_snowid", "0002_worker_lease"),
        ("django_snowid", "0003_id_decoder"),
        ("django_snowid", "0004_sequences"),
        ("django_snowid", "0005_lease_horizon_ms"),
    ]

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
        migrations.CreateModel(
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
        migrations.CreateModel(
            name="SequenceMark",
            fields=[
                ("name", models.CharField(max_length=120, primary_key=True, serialize=False)),
                ("value", models.BigIntegerField()),
            ],
            options={"verbose_name": "sequence mark"},
        ),
        admin_page("IdDecoder", "id decoder", "Decode ids and order numbers"),
        admin_page("SequenceStatus", "sequence status", "Sequences, streams and leases"),
    ]
