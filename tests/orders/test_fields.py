"""OrderNumberField on its own: what migrations write, and its checks on throwaway models."""

from __future__ import annotations

from django.db import models
from django.db.migrations.writer import MigrationWriter
from django.test.utils import isolate_apps

from django_snowid.fields import OrderNumberField


def test_migrations_write_the_public_path_and_only_the_options_given():
    field = OrderNumberField(shard_from="user_id", stream="orders", packing="decimal")
    code, imports = MigrationWriter.serialize(field)
    assert imports == {"import django_snowid.fields"}
    assert code.startswith("django_snowid.fields.OrderNumberField(")
    # unique=True and editable=False are the field's own defaults: not written
    assert "unique" not in code and "editable" not in code
    _name, path, args, kwargs = field.deconstruct()
    clone = OrderNumberField(*args, **kwargs)
    assert clone.deconstruct()[1:] == (path, args, kwargs)
    assert kwargs == {"shard_from": "user_id", "stream": "orders", "packing": "decimal"}


@isolate_apps("tests.testapp")
def test_a_format_that_does_not_fit_is_e202_alone():
    class Wide(models.Model):
        number = OrderNumberField(sequence_bits=70)

        class Meta:
            app_label = "testapp"

    field = Wide._meta.get_field("number")
    assert [m.id for m in field.check()] == ["django_snowid.E202"]


@isolate_apps("tests.testapp")
def test_shard_from_naming_nothing_is_e201_alone():
    class Lost(models.Model):
        number = OrderNumberField(shard_from="nobody_id")

        class Meta:
            app_label = "testapp"

    field = Lost._meta.get_field("number")
    assert [m.id for m in field.check()] == ["django_snowid.E201"]
