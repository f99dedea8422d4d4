"""The table refuses what django-sequences' table refuses: a value below 0, a name of more
than 100 characters (a daily sequence's stored name adds ``:YYYYMMDD``).

Rows that break them (drawn through the compat module before it checked its input) stop
the migration, named, before anything is changed: only their owner knows which value each
sequence really issued last."""

from django.db import migrations
from django.db.models import Q

from django_snowid.db.constraints import check_constraint
from django_snowid.sequences.models import name_fits


def refuse_rows_that_break_them(apps, schema_editor):
    mark = apps.get_model("snowid_sequences", "SequenceMark")
    rows = mark.objects.using(schema_editor.connection.alias)
    bad = list(rows.exclude(name_fits()).values_list("name", flat=True))
    bad += [f"{n!r} (value {v})" for n, v in rows.filter(value__lt=0).values_list("name", "value")]
    if bad:
        raise RuntimeError(
            f"{len(bad)} sequence(s) of snowid_sequences_sequencemark break django-sequences' "
            f"limits (a value below 0, a name over 100 characters): {', '.join(bad[:10])}. "
            "Set each value to the last one the sequence really issued (0 or more), rename or "
            "delete the long names, then run migrate again. Nothing was changed."
        )


class Migration(migrations.Migration):
    dependencies = [("snowid_sequences", "0001_initial")]

    operations = [
        migrations.RunPython(refuse_rows_that_break_them, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="sequencemark",
            constraint=check_constraint(Q(value__gte=0), "snowid_sequences_mark_not_negative"),
        ),
        migrations.AddConstraint(
            model_name="sequencemark",
            constraint=check_constraint(name_fits(), "snowid_sequences_name_length"),
        ),
    ]
