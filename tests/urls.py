from importlib.util import find_spec

from django.contrib import admin
from django.urls import include, path, register_converter

from django_snowid.ids.publicids import PublicIdConverter
from tests.testapp import views

register_converter(PublicIdConverter, "snowid_public")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("p/<snowid_public:pk>/", views.product_detail, name="product-by-public-id"),
    path("tickets/", views.ticket_lookup, name="ticket-lookup"),
    path("posts/", include("tests.feedapp.views")),
]

if find_spec("rest_framework") is not None:  # the REST API needs the optional drf extra
    from tests.testapp.api import router

    urlpatterns.append(path("api/", include(router.urls)))
    urlpatterns.append(path("feed/", include("tests.feedapp.api")))
