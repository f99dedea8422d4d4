import django.db.models.deletion
from django.db import migrations, models

ON_DELETE = getattr(django.db.models.deletion, "DB_CASCADE", django.db.models.deletion.CASCADE)


class Migration(migrations.Migration):
    initial = True

    dependencies = [("adoptapp", "0001_initial")]

    operations = [
        migrations.CreateModel(
            name="Crate",
            fields=[
                ("id", models.AutoField(primary_key=True, serialize=False)),
                (
                    "shelf",
                    models.ForeignKey(
                        on_delete=ON_DELETE, related_name="crates", to="adoptapp.shelf"
                    ),
                ),
            ],
            options={"db_table": "Adopt_Crate"},
        ),
    ]
