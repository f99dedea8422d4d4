"""A model of another app pointing at ``adoptapp.Shelf``, in a mixed-case table, whose
key deletes in the database where Django has that (``DB_CASCADE``, Django 6.1)."""

from __future__ import annotations

from django.db import models

ON_DELETE = getattr(models, "DB_CASCADE", models.CASCADE)


class Crate(models.Model):
    id = models.AutoField(primary_key=True)
    shelf = models.ForeignKey("adoptapp.Shelf", on_delete=ON_DELETE, related_name="crates")

    class Meta:
        db_table = "Adopt_Crate"
