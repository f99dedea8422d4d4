"""The tables of order-number streams and worker-id leases, and the table-less models that
give the admin's two pages their place on the admin index."""

from __future__ import annotations

from django.db import models


class OrderStreamState(models.Model):
    """The last issued (local second, sequence) of one order-number stream; only moves forward."""

    name = models.CharField(max_length=200, primary_key=True)
    second = models.BigIntegerField()
    sequence = models.BigIntegerField()
    # core.order_keys.KeyRecord; NULL: rows of the release before (no database default).
    key_id = models.CharField(max_length=16, null=True, blank=True)  # noqa: DJ001
    key_next = models.CharField(max_length=16, null=True, blank=True)  # noqa: DJ001
    key_next_from = models.BigIntegerField(null=True, blank=True)

    class Meta:
        verbose_name = "order-number stream"

    def __str__(self) -> str:
        return self.name


class WorkerLease(models.Model):
    """A worker id of a pool, leased by one process; the row outlives the lease (``horizon_ms``)."""

    pool = models.CharField(max_length=200)
    worker = models.IntegerField()
    owner = models.CharField(max_length=200)
    token = models.CharField(max_length=64)
    acquired_ms = models.BigIntegerField()
    expires_ms = models.BigIntegerField()
    horizon_ms = models.BigIntegerField(default=-1)
    layout = models.CharField(max_length=200, default="", blank=True)

    class Meta:
        verbose_name = "worker-id lease"
        constraints = [
            models.UniqueConstraint(fields=["pool", "worker"], name="django_snowid_one_lease")
        ]

    def __str__(self) -> str:
        return f"{self.pool}:{self.worker}"


class IdDecoder(models.Model):
    """No table: the admin decode page's place on the index, and its permission."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [("view_decode", "Can use the page that decodes ids and order numbers")]
        verbose_name = "id decoder"
        verbose_name_plural = "Decode ids and order numbers"


class StoreStatus(models.Model):
    """No table: the admin status page's place on the index, and its permission."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [("view_status", "Can see the status of streams, leases and sequences")]
        verbose_name = "store status"
        verbose_name_plural = "Status of streams, leases and sequences"


class IdAdoption(models.Model):
    """A model switched to Snowflake ids: the switch's journal and the legacy-id boundary."""

    label = models.CharField(max_length=200, unique=True)  # "app_label.Model"
    table = models.CharField(max_length=200)
    column = models.CharField(max_length=200)
    #: Ids below it are legacy ids: the smallest Snowflake id of the switch's start.
    first_id = models.BigIntegerField()
    old_max = models.BigIntegerField(null=True)
    state = models.CharField(max_length=20, default="running")  # running, done, undone
    step = models.IntegerField(default=0)  # the next step of ``plan`` to run
    progress = models.JSONField(default=dict)  # the backfill's position per table
    plan = models.JSONField(default=dict)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True)

    class Meta:
        verbose_name = "Snowflake id adoption"

    def __str__(self) -> str:
        return self.label
