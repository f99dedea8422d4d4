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
