"""The tables of order-number streams and worker-id leases, and the table-less models that
give the admin's two pages their place on the admin index."""

from __future__ import annotations

from django.db import models


class OrderStreamState(models.Model):
    """The last issued position of one order-number stream (the database store).

    ``second`` is the local second (Unix seconds + the zone's offset) of the stream's last
    number, ``sequence`` its sequence within that second. Rows only ever move forward.
    """

    name = models.CharField(max_length=200, primary_key=True)
    second = models.BigIntegerField()
    sequence = models.BigIntegerField()

    class Meta:
        verbose_name = "order-number stream"

    def __str__(self) -> str:
        return self.name


class WorkerLease(models.Model):
    """A worker id of a pool, leased by one process (the database lease store).

    A row outlives its lease (``expires_ms`` in the past, or 0 once released) so that
    ``horizon_ms``, the latest time (Unix ms) its holders may have issued ids in, is
    never forgotten. ``layout`` names the layout its holder issues ids of.
    """

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
    """No table: gives the admin's decode page its place (and link) on the admin index,
    and its permission: the page tells any number's position within its second."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [("view_decode", "Can use the page that decodes ids and order numbers")]
        verbose_name = "id decoder"
        verbose_name_plural = "Decode ids and order numbers"


class StoreStatus(models.Model):
    """No table: gives the admin's status page (order-number streams, worker-id leases and,
    with ``django_snowid.sequences`` installed, named sequences) its place on the index,
    and its permission: the page shows business volume (numbers and values a second) and
    the hosts and pids of the workers."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [("view_status", "Can see the status of streams, leases and sequences")]
        verbose_name = "store status"
        verbose_name_plural = "Status of streams, leases and sequences"


class IdAdoption(models.Model):
    """A model switched to Snowflake ids (``snowid_adopt`` or its migration): the journal
    of the switch, to resume it, and the boundary below which its ids are legacy ids."""

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
