"""A plain ListView paged by ids."""

from __future__ import annotations

from django.urls import path
from django.views.generic import ListView

from django_snowid.pagination import SnowflakePaginationMixin

from .models import Post


class PostList(SnowflakePaginationMixin, ListView):
    model = Post
    paginate_by = 3
    template_name = "feedapp/post_list.html"


urlpatterns = [path("", PostList.as_view(), name="post-list")]
