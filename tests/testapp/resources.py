"""django-import-export resources of the test models, and an admin site of their own that
imports and exports them (needs the ``import-export`` extra)."""

from __future__ import annotations

from django.contrib import admin
from import_export.admin import ImportExportModelAdmin

from django_snowid.import_export import SnowflakeModelResource

from .models import Customer, Parcel, Purchase, Tag


class PurchaseResource(SnowflakeModelResource):
    class Meta:
        model = Purchase


class ParcelResource(SnowflakeModelResource):
    class Meta:
        model = Parcel


class TagResource(SnowflakeModelResource):
    class Meta:
        model = Tag


class CustomerResource(SnowflakeModelResource):
    class Meta:
        model = Customer


#: At /spreadsheets/: the suite's other admin tests keep the default site as it is.
site = admin.AdminSite(name="spreadsheets")


@admin.register(Purchase, site=site)
class PurchaseAdmin(ImportExportModelAdmin):
    resource_classes = [PurchaseResource]
