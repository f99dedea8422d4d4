from importlib.util import find_spec

from django.contrib import admin
from django.urls import include, path

urlpatterns = [path("admin/", admin.site.urls)]

if find_spec("rest_framework") is not None:  # the REST API needs the optional drf extra
    from tests.testapp.api import router

    urlpatterns.append(path("api/", include(router.urls)))
