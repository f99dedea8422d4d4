from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="SequenceMark",
            fields=[
                ("name", models.CharField(max_length=120, primary_key=True, serialize=False)),
                ("value", models.BigIntegerField()),
            ],
            options={"verbose_name": "sequence mark"},
        ),
    ]
