"""E900/W900: generic relations whose object ids cannot hold a Snowflake id, found in any
installed app (the real django-taggit) and in Django's own documented example."""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.fields import GenericForeignKey, GenericRelation
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.test.utils import isolate_apps

from django_snowid.adopt.checks import generic_relation_messages
from django_snowid.adopt.relations import generic_keys
from django_snowid.fields import SnowflakeAutoField
from tests.adopt_project import AdoptProject, backend


@pytest.fixture
def taggit_project(tmp_path):
    project = AdoptProject(tmp_path, taggit_default=True)
    yield project
    project.drop()


@pytest.mark.django_db
def test_taggit_default_tags_on_a_snowflake_model_fail_the_check(taggit_project):
    done = taggit_project.manage("check")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "taggitapp.Product.tags: (django_snowid.E900)" in done.stderr
    assert "taggit.TaggedItem.object_id (IntegerField, column 'object_id')" in done.stderr
    assert "of app 'taggit'" in done.stderr
    assert "TaggableManager(through=...)" in done.stderr


@pytest.mark.django_db
def test_what_e900_says_happens_on_the_servers(taggit_project):
    if backend() == "sqlite3":
        pytest.skip("SQLite integers hold 64 bits: the servers' failure")
    taggit_project.ok("migrate", "--skip-checks", "-v", "0")
    out = taggit_project.shell(
        "from django.db import DataError\n"
        "from tests.taggitapp.models import Product\n"
        "product = Product.objects.create(name='p')\n"
        "try:\n"
        "    product.tags.add('red')\n"
        "except DataError as exc:\n"
        "    print('DataError', exc)\n"
    )
    assert "DataError" in out and "out of range" in out.lower()


@pytest.mark.django_db
def test_the_recipe_passes_and_taggits_own_table_is_a_warning(tmp_path):
    project = AdoptProject(tmp_path)
    try:
        done = project.manage("check")
    finally:
        project.drop()
    assert done.returncode == 0, done.stderr
    assert "E900" not in done.stderr
    # taggit's own table stays narrow: one warning, naming it (not the recipe's table).
    assert done.stderr.count("(django_snowid.W900)") == 1
    assert "taggit.TaggedItem: (django_snowid.W900)" in done.stderr
    assert "adoptapp.Shelf" in done.stderr


@isolate_apps("tests.testapp")
def test_djangos_documented_generic_relation():
    class TaggedNote(models.Model):
        content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
        object_id = models.PositiveIntegerField()
        content_object = GenericForeignKey("content_type", "object_id")

        class Meta:
            app_label = "testapp"

    class WideNote(models.Model):
        content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
        object_id = models.PositiveBigIntegerField()
        content_object = GenericForeignKey("content_type", "object_id")

        class Meta:
            app_label = "testapp"

    class TextNote(models.Model):
        content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
        object_id = models.CharField(max_length=19)
        content_object = GenericForeignKey("content_type", "object_id")

        class Meta:
            app_label = "testapp"

    class Bookmark(models.Model):
        id = SnowflakeAutoField(primary_key=True)
        notes = GenericRelation(TaggedNote)
        wide = GenericRelation(WideNote)

        class Meta:
            app_label = "testapp"

    class Plain(models.Model):
        id = SnowflakeAutoField(primary_key=True)

        class Meta:
            app_label = "testapp"

    keys = generic_keys([TaggedNote, WideNote, TextNote])
    [error] = generic_relation_messages([Bookmark], keys)
    assert error.id == "django_snowid.E900" and error.obj is Bookmark._meta.get_field("notes")
    assert "testapp.TaggedNote.object_id (PositiveIntegerField, column 'object_id')" in error.msg
    assert error.hint.endswith("python manage.py snowid_explain E900")

    [warning] = generic_relation_messages([Plain], keys)
    assert warning.id == "django_snowid.W900" and warning.obj is TaggedNote
    assert "testapp.Plain have Snowflake primary keys" in warning.msg

    assert generic_relation_messages([], keys) == []
