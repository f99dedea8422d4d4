from importlib.util import find_spec

from django.contrib import admin
from django.urls import include, path, register_converter
from django.views.decorators.csrf import csrf_exempt

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

if find_spec("graphene_django") is not None:  # the optional graphene extra
    from graphene_django.views import GraphQLView

    from tests.testapp.graphene_schema import schema as graphene_schema

    graphene_view = GraphQLView.as_view(schema=graphene_schema)
    urlpatterns.append(path("graphene/", csrf_exempt(graphene_view)))

if find_spec("strawberry_django") is not None:  # the optional strawberry extra
    from strawberry.django.views import GraphQLView as StrawberryView

    from tests.testapp.strawberry_schema import schema as strawberry_schema

    strawberry_view = StrawberryView.as_view(schema=strawberry_schema)
    urlpatterns.append(path("strawberry/", csrf_exempt(strawberry_view)))

if find_spec("import_export") is not None:  # the optional import-export extra
    from tests.testapp.resources import site as spreadsheet_site

    urlpatterns.append(path("spreadsheets/", spreadsheet_site.urls))
