"""django-import-export resources of the test models, and an admin site of their own that
imports and exports them (needs the ``import-export`` extra)."""

from __future__ import annotations

from django.contrib import admin
from import_export.admin import ImportExportModelAdmin
from import_export.resources import modelresource_factory

from django_snowid.import_export import SnowflakeModelResource

from .models import Customer, Parcel, Purchase, Tag

PurchaseResource, ParcelResource, TagResource, CustomerResource = (
    modelresource_factory(model, resource_class=SnowflakeModelResource)
    for model in (Purchase, Parcel, Tag, Customer)
)


#: At /spreadsheets/: the suite's other admin tests keep the default site as it is.
site = admin.AdminSite(name="spreadsheets")


@admin.register(Purchase, site=site)
class PurchaseAdmin(ImportExportModelAdmin):
    resource_classes = [PurchaseResource]
