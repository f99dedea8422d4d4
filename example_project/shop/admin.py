from django.contrib import admin

from django_snowid.admin.mixins import SnowflakeAdminMixin, SnowflakeModelAdmin

from .models import GiftCard, Invoice, Order, OrderLine, Product


class OrderLineInline(admin.TabularInline):
    model = OrderLine
    extra = 0


@admin.register(Order)
class OrderAdmin(SnowflakeAdminMixin, admin.ModelAdmin):
    # The mixin adds the "created", "worker" and "shard" columns, a decoded panel on the
    # change form, a "created" filter through the primary key, and search by a pasted id.
    list_display = ["number", "user", "note"]
    readonly_fields = ["id", "public_id", "number"]
    inlines = [OrderLineInline]


@admin.register(Product)
class ProductAdmin(SnowflakeModelAdmin):
    list_display = ["name", "price_cents"]
    search_fields = ["name"]


@admin.register(GiftCard)
class GiftCardAdmin(SnowflakeModelAdmin):
    list_display = ["code", "balance_cents"]


@admin.register(Invoice)
class InvoiceAdmin(SnowflakeModelAdmin):
    list_display = ["code", "order"]
    readonly_fields = ["code"]
