"""Migrating an existing BigAutoField primary key to SnowflakeAutoField."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from django_snowid.ids import get_layout

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
