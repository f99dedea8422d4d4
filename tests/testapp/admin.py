from django.contrib import admin

from django_snowid.admin.mixins import SnowflakeAdminMixin, SnowflakeModelAdmin

from .models import DecimalOrder, Product, ShardedOrder, ShopOrder, Ticket, TinyOrder


@admin.register(Product)
class ProductAdmin(SnowflakeModelAdmin):
    list_display = ["name"]
    search_fields = ["name"]


@admin.register(ShopOrder)
class ShopOrderAdmin(SnowflakeAdminMixin, admin.ModelAdmin):
    list_display = ["number", "user_id"]


admin.site.register([DecimalOrder, ShardedOrder, Ticket, TinyOrder])
