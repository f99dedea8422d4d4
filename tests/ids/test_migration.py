"""Migrating an existing BigAutoField primary key to SnowflakeAutoField."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from django_snowid.settings_layouts import get_layout

BEFORE = [("testapp", "0001_initial")]
AFTER = [("testapp", "0002_legacy_to_snowflake")]


@pytest.fixture
def back_to_latest():
    yield
    # Leave the schema as the other tests expect it, whatever happened.
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_existing_rows_keep_their_ids_and_foreign_keys(back_to_latest):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old_apps = executor.loader.project_state(BEFORE).apps
    OldLegacy = old_apps.get_model("testapp", "Legacy")
    OldChild = old_apps.get_model("testapp", "LegacyChild")
    old_parents = [OldLegacy.objects.create(name=f"old{i}") for i in range(3)]
    old_ids = [p.pk for p in old_parents]
    assert max(old_ids) < 1000  # the database numbered them
    OldChild.objects.create(parent=old_parents[1])

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)

    from tests.testapp.models import Legacy, LegacyChild

    assert sorted(Legacy.objects.values_list("pk", flat=True)) == sorted(old_ids)
    child = LegacyChild.objects.get()
    assert child.parent.name == "old1" and child.parent_id == old_ids[1]
    new = Legacy.objects.create(name="new")
    assert new.pk > max(old_ids)
    assert get_layout().decode(new.pk).parts == {"worker": 3}
    LegacyChild.objects.create(parent=new)
    assert new.children.count() == 1
    bulk = Legacy.objects.bulk_create([Legacy(name="b1"), Legacy(name="b2")])
    assert all(b.pk > new.pk for b in bulk)


def _forget_the_app_was_migrated() -> MigrationRecorder:
    recorder = MigrationRecorder(connection)
    recorder.migration_qs.filter(app__in=["django_snowid", "snowid_sequences"]).delete()
    return recorder


@pytest.mark.django_db
def test_a_new_database_migrates_in_one_step_an_app():
    _forget_the_app_was_migrated()

    targets = [("django_snowid", "0001_initial"), ("snowid_sequences", "0001_initial")]
    plan = MigrationExecutor(connection).migration_plan(targets)

    assert [(migration.app_label, migration.name, backwards) for migration, backwards in plan] == [
        ("django_snowid", "0001_initial", False),
        ("snowid_sequences", "0001_initial", False),
    ]


@pytest.mark.django_db(transaction=True)
def test_the_way_back_continues_above_the_largest_id(back_to_latest):
    call_command("migrate", "testapp", "0001", verbosity=0)
    old_apps = MigrationExecutor(connection).loader.project_state(BEFORE).apps
    legacy = [
        old_apps.get_model("testapp", "Legacy").objects.create(name=f"old{i}") for i in range(3)
    ]
    call_command("migrate", "testapp", "0002", verbosity=0)
    from tests.testapp.models import Legacy

    snowflake = Legacy.objects.create(name="snowflake")
    assert snowflake.pk > 2**40

    call_command("migrate", "testapp", "0001", verbosity=0)  # back to BigAutoField
    OldLegacy = (
        MigrationExecutor(connection)
        .loader.project_state(BEFORE)
        .apps.get_model("testapp", "Legacy")
    )
    after = OldLegacy.objects.create(name="after")  # the database numbers it again
    assert after.pk > snowflake.pk
    assert sorted(OldLegacy.objects.values_list("pk", flat=True)) == sorted(
        [p.pk for p in legacy] + [snowflake.pk, after.pk]
    )
