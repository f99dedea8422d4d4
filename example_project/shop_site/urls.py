from django.contrib import admin
from django.urls import path

from shop import views

urlpatterns = [
    path("", views.home, name="home"),
    path("admin/", admin.site.urls),
    path("gift-cards.json", views.gift_cards, name="gift-cards"),
    path("orders.json", views.orders, name="orders"),
]
