from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("django_snowid", "0003_id_decoder"),
    ]

    operations = [
        migrations.CreateModel(
            name="SequenceMark",
            fields=[
                ("name", models.CharField(max_length=120, primary_key=True, serialize=False)),
                ("value", models.BigIntegerField()),
            ],
            options={"verbose_name": "sequence mark"},
        ),
        migrations.CreateModel(
            name="SequenceStatus",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
            ],
            options={
                "verbose_name": "sequence status",
                "verbose_name_plural": "Sequences, streams and leases",
                "managed": False,
                "default_permissions": (),
            },
        ),
    ]
