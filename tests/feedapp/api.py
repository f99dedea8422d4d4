"""REST views over the feed models: ours, DRF's CursorPagination, and filters."""

from __future__ import annotations

from django.urls import include, path
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework import pagination, routers, viewsets

from django_snowid.drf import SnowflakeCursorPagination, SnowflakeModelSerializer

from .models import Entry, Post


class PostSerializer(SnowflakeModelSerializer):
    class Meta:
        model = Post
        fields = ["id", "author", "body"]


class EntrySerializer(SnowflakeModelSerializer):
    class Meta:
        model = Entry
        fields = ["id", "stamp"]


class Pages(SnowflakeCursorPagination):
    page_size = 5
    max_page_size = 50


class EntryPages(Pages):
    key = "stamp"


class BrowsePages(Pages):
    settle = False


class PostViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Post.objects.all()
    serializer_class = PostSerializer
    pagination_class = Pages
    filter_backends = [DjangoFilterBackend]
    filterset_fields = ["author"]


class BrowsePostViewSet(PostViewSet):
    pagination_class = BrowsePages


class EntryViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Entry.objects.all()
    serializer_class = EntrySerializer
    pagination_class = EntryPages


class DrfCursorPages(pagination.CursorPagination):
    ordering = "id"
    page_size = 20


class DrfCursorPostViewSet(viewsets.ReadOnlyModelViewSet):
    """DRF's own CursorPagination, oldest first: what the polling tests compare with."""

    queryset = Post.objects.all()
    serializer_class = PostSerializer
    pagination_class = DrfCursorPages


router = routers.SimpleRouter()
router.register("posts", PostViewSet, basename="feed-post")
router.register("browse", BrowsePostViewSet, basename="feed-browse")
router.register("entries", EntryViewSet, basename="feed-entry")
router.register("drf-cursor", DrfCursorPostViewSet, basename="feed-drf-cursor")

urlpatterns = [path("", include(router.urls))]
