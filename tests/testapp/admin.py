from django.contrib import admin

from django_snowid.admin.mixins import SnowflakeAdminMixin, SnowflakeModelAdmin

from .models import DecimalOrder, Product, Purchase, ShardedOrder, ShopOrder, Ticket, TinyOrder


@admin.register(Product)
class ProductAdmin(SnowflakeModelAdmin):
    list_display = ["name"]
    search_fields = ["name"]


@admin.register(ShopOrder)
class ShopOrderAdmin(SnowflakeAdminMixin, admin.ModelAdmin):
    list_display = ["number", "user_id"]


@admin.register(Purchase)
class PurchaseAdmin(SnowflakeAdminMixin, admin.ModelAdmin):
    """An order changelist as a shop has one: its number, the customer, and the mixin's
    created, worker and shard columns beside the "created" filter."""

    list_display = ["number", "customer"]

    @admin.display(description="customer")
    def customer(self, obj: Purchase) -> str:
        return obj.shopper.name


admin.site.register([DecimalOrder, ShardedOrder, Ticket, TinyOrder])
