"""Which key conceals an order-number stream's seconds: its record, kept with the stream
(nullable, so that processes of the release before keep inserting rows during a deploy)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("django_snowid", "0003_idadoption"),
    ]

    operations = [
        migrations.AddField(
            model_name="orderstreamstate",
            name="key_id",
            field=models.CharField(blank=True, max_length=16, null=True),
        ),
        migrations.AddField(
            model_name="orderstreamstate",
            name="key_next",
            field=models.CharField(blank=True, max_length=16, null=True),
        ),
        migrations.AddField(
            model_name="orderstreamstate",
            name="key_next_from",
            field=models.BigIntegerField(blank=True, null=True),
        ),
    ]
