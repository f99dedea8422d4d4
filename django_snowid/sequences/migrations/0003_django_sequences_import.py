"""What the import from django-sequences found, so that a later change to its table (old
code still drawing from it) is noticed."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("snowid_sequences", "0002_constraints")]

    operations = [
        migrations.CreateModel(
            name="DjangoSequencesImport",
            fields=[
                ("table", models.CharField(max_length=200, primary_key=True, serialize=False)),
                ("rows", models.JSONField(default=dict)),
                ("imported_at", models.DateTimeField()),
            ],
            options={"verbose_name": "import from django-sequences"},
        ),
    ]
