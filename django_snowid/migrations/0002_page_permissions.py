"""The permissions of the admin's two pages: the status page shows business volume and
worker hosts, the decode page any number's position within its second."""

from django.db import migrations


def page_options(verbose_name, index_entry, permission):
    return {
        "verbose_name": verbose_name,
        "verbose_name_plural": index_entry,
        "managed": False,
        "default_permissions": (),
        "permissions": [permission],
    }


class Migration(migrations.Migration):
    dependencies = [
        ("django_snowid", "0001_initial"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="iddecoder",
            options=page_options(
                "id decoder",
                "Decode ids and order numbers",
                ("view_decode", "Can use the page that decodes ids and order numbers"),
            ),
        ),
        migrations.AlterModelOptions(
            name="storestatus",
            options=page_options(
                "store status",
                "Status of streams, leases and sequences",
                ("view_status", "Can see the status of streams, leases and sequences"),
            ),
        ),
    ]
