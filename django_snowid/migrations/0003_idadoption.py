"""The journal of models switched to Snowflake ids (``snowid_adopt``)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("django_snowid", "0002_page_permissions"),
    ]

    operations = [
        migrations.CreateModel(
            name="IdAdoption",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("label", models.CharField(max_length=200, unique=True)),
                ("table", models.CharField(max_length=200)),
                ("column", models.CharField(max_length=200)),
                ("first_id", models.BigIntegerField()),
                ("old_max", models.BigIntegerField(null=True)),
                ("state", models.CharField(default="running", max_length=20)),
                ("step", models.IntegerField(default=0)),
                ("progress", models.JSONField(default=dict)),
                ("plan", models.JSONField(default=dict)),
                ("started_at", models.DateTimeField()),
                ("finished_at", models.DateTimeField(null=True)),
            ],
            options={"verbose_name": "Snowflake id adoption"},
        ),
    ]
