"""Adds the database default to a column of a table that may already hold rows."""

import django_snowid.fields
import django_snowid.ids.database.default
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("dbidsapp", "0001_initial")]

    operations = [
        migrations.AlterField(
            model_name="label",
            name="code",
            field=django_snowid.fields.SnowflakeField(
                database_ids=True,
                db_default=django_snowid.ids.database.default.SnowflakeDefault(
                    "e1577836800000_u1_t41_n8_q14_h0_s4"
                ),
                layout="dbids",
            ),
        ),
    ]
