"""Migrating an existing BigAutoField primary key to SnowflakeAutoField."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from django_snowid.ids.issuer import get_layout

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


# The five steps development trees before the first release migrated in; 0001_initial
# replaces them.
DEVELOPMENT_STEPS = [
    "0001_order_stream_state",
    "0002_worker_lease",
    "0003_id_decoder",
    "0004_sequences",
    "0005_lease_horizon_ms",
]


def _forget_the_app_was_migrated() -> MigrationRecorder:
    # Applying a migration that replaces others records those as applied too.
    recorder = MigrationRecorder(connection)
    recorder.migration_qs.filter(app="django_snowid").delete()
    return recorder


@pytest.mark.django_db
def test_a_database_that_applied_the_development_steps_has_nothing_to_migrate():
    recorder = _forget_the_app_was_migrated()
    for name in DEVELOPMENT_STEPS:
        recorder.record_applied("django_snowid", name)

    executor = MigrationExecutor(connection)

    assert executor.migration_plan([("django_snowid", "0001_initial")]) == []


@pytest.mark.django_db
def test_a_new_database_migrates_in_one_step():
    _forget_the_app_was_migrated()

    plan = MigrationExecutor(connection).migration_plan([("django_snowid", "0001_initial")])

    assert [(migration.app_label, migration.name, backwards) for migration, backwards in plan] == [
        ("django_snowid", "0001_initial", False)
    ]
