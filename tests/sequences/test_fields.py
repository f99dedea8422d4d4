"""Fields filled from named sequences, and the checks of sequences and their fields."""

from __future__ import annotations

import pytest
from django.core import checks
from django.db import models
from django.db.migrations.writer import MigrationWriter
from django.test import override_settings
from django.test.utils import isolate_apps

from django_snowid.exceptions import InvalidSequence
from django_snowid.sequences.fields import SequenceField, SequenceTextField
from tests.testapp.models import Customer, Invoice


@pytest.mark.django_db(transaction=True)
def test_fields_fill_themselves_on_insert(seq_backend, settings):
    settings.SNOWID_SEQUENCES = {"invoice": {"kind": "daily", "zone": "Europe/Paris"}}
    first, second = Customer.objects.create(), Customer.objects.create()
    assert (first.number, second.number) == (1, 2)
    kept = Customer.objects.create(number=500)  # a value given is kept
    assert kept.number == 500
    bulk = Customer.objects.bulk_create([Customer(), Customer()])
    assert [c.number for c in bulk] == [3, 4]
    invoice = Invoice.objects.create()
    invoice.refresh_from_db()
    assert invoice.code.startswith("INV-") and invoice.code.endswith("-000001")
    from datetime import datetime
    from zoneinfo import ZoneInfo

    assert invoice.code[4:12] == datetime.now(ZoneInfo("Europe/Paris")).strftime("%Y%m%d")
    invoice.save()  # an update draws nothing
    assert Invoice.objects.create().code.endswith("-000002")


def test_deconstruct_round_trip():
    field = SequenceTextField(sequence="invoice", template="I-{value:04d}", max_length=12)
    _name, path, _args, kwargs = field.deconstruct()
    assert path == "django_snowid.sequences.fields.SequenceTextField"
    assert kwargs == {"sequence": "invoice", "template": "I-{value:04d}", "max_length": 12}
    assert "SequenceTextField(" in MigrationWriter.serialize(field)[0]
    _name, path, _args, kwargs = SequenceField(sequence="c").deconstruct()
    assert path == "django_snowid.sequences.fields.SequenceField" and kwargs == {"sequence": "c"}


@pytest.mark.parametrize("field_class", [SequenceField, SequenceTextField])
def test_an_editable_sequence_field_stays_editable_through_a_migration(field_class):
    options = {"template": "{value}"} if field_class is SequenceTextField else {}
    field = field_class(sequence="c", editable=True, **options)
    _name, _path, args, kwargs = field.deconstruct()
    assert kwargs["editable"] is True
    assert field_class(*args, **kwargs).editable is True


def test_illegal_sequence_name_is_refused_at_once():
    with pytest.raises(InvalidSequence, match="not a sequence name"):
        SequenceField(sequence="no spaces")


@isolate_apps("tests.testapp")
@pytest.mark.parametrize(
    "template, max_length, expected",
    [
        ("INV-{day}", 40, "django_snowid.E311"),  # no value: every text the same
        ("INV-{when}-{value}", 40, "django_snowid.E311"),
        ("INV-{value:x}", 40, "django_snowid.E311"),
        ("INV-{day}-{value:06d}", 18, "django_snowid.E312"),  # 19 characters
        ("INV-{day}-{value:06d}", 19, None),
    ],
)
def test_template_checks(template, max_length, expected):
    class Doc(models.Model):
        code = SequenceTextField(sequence="doc", template=template, max_length=max_length)

        class Meta:
            app_label = "testapp"

    found = [m.id for m in Doc.check() if m.id.startswith("django_snowid")]
    assert found == ([expected] if expected else [])


@isolate_apps("tests.testapp")
def test_field_check_refused_unknown_name(settings):
    settings.SNOWID_SEQUENCES_UNKNOWN = "refuse"

    class Doc(models.Model):
        number = SequenceField(sequence="undeclared")

        class Meta:
            app_label = "testapp"

    assert [m.id for m in Doc.check()] == ["django_snowid.E310"]


def ids(**settings) -> list[str]:
    with override_settings(**settings):
        return [
            m.id
            for m in checks.run_checks(databases=[])
            if m.id and m.id.startswith("django_snowid.E3")
        ]


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"SNOWID_SEQUENCE_BACKEND": "memcached"}, ["django_snowid.E300"]),
        ({"SNOWID_SEQUENCES_UNKNOWN": "ignore"}, ["django_snowid.E301"]),
        ({"SNOWID_SEQUENCES": ["customer"]}, ["django_snowid.E302"]),
        ({"SNOWID_SEQUENCES": {"a b": {}}}, ["django_snowid.E302"]),
        ({"SNOWID_SEQUENCES": {"c": {"kind": "weekly"}}}, ["django_snowid.E302"]),
        ({"SNOWID_SEQUENCES": {"c": {"zone": "Mars/Olympus"}}}, ["django_snowid.E302"]),
        ({"SNOWID_SEQUENCES": {"c": {"start": -1}}}, ["django_snowid.E302"]),
        ({"SNOWID_SEQUENCES": {"c": {"min_step": 10, "max_step": 5}}}, ["django_snowid.E302"]),
        ({"SNOWID_SEQUENCES": {"c": {"size": 5}}}, ["django_snowid.E302"]),
        ({"SNOWID_SEQUENCE_MIN_STEP": 0}, ["django_snowid.E303"]),
        ({"SNOWID_SEQUENCES": {"c": {"kind": "daily", "zone": "Asia/Tokyo"}}}, []),
    ],
)
def test_sequence_settings_checks(overrides, expected):
    assert ids(**overrides) == expected


def test_sequence_checks_are_registered():
    from django.core.management import call_command
    from django.core.management.base import SystemCheckError

    with (
        override_settings(SNOWID_SEQUENCES_UNKNOWN="maybe"),
        pytest.raises(SystemCheckError, match="E301"),
    ):
        call_command("check", databases=[])
