
import django_snowid.fields
import django_snowid.ids.database.default
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
    ]

    operations = [
        migrations.CreateModel(
            name='Label',
            fields=[
                ('id', django_snowid.fields.SnowflakeAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', django_snowid.fields.SnowflakeField(layout='dbids')),
                ('name', models.CharField(max_length=50)),
            ],
        ),
        migrations.CreateModel(
            name='Reading',
            fields=[
                ('id', django_snowid.fields.SnowflakeAutoField(database_ids=True, db_default=django_snowid.ids.database.default.SnowflakeDefault('e1577836800000_u1_t41_n8_q14_h0_s4'), layout='dbids', primary_key=True, serialize=False)),
                ('value', models.IntegerField()),
                ('source', models.CharField(default='python', max_length=20)),
            ],
        ),
    ]
