"""django-taggit as its README shows it, on a model with a Snowflake primary key."""

from __future__ import annotations

from django.db import models
from taggit.managers import TaggableManager


class Product(models.Model):
    name = models.CharField(max_length=50)
    tags = TaggableManager()
