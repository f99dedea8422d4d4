
import django_snowid.fields
import django_snowid.ids.database.default
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('dbidsapp', '0002_label_database_ids'),
    ]

    operations = [
        migrations.AddField(
            model_name='label',
            name='batch',
            field=django_snowid.fields.SnowflakeField(database_ids=True, db_default=django_snowid.ids.database.default.SnowflakeDefault('e1577836800000_u1_t41_n8_q14_h0_s4'), layout='dbids'),
        ),
    ]
