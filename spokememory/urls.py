from django.contrib import admin
from django.urls import include, path

from memory.dispatch import discovery, health, views
from memory.mcp import http as mcp_http
from memory.observability import endpoint
from reviews.ratelimit import limited

urlpatterns = [
    path("", discovery.home),
    path("v1/ops/<str:op>", views.OpView.as_view()),
    path("v1/connect", views.ConnectView.as_view()),
    path("v1/disconnect", views.DisconnectView.as_view()),
    path("v1/manifest", discovery.manifest),
    path("v1/openapi.json", discovery.openapi),
    path("v1/docs", discovery.api_docs),
    # MCP over streamable HTTP, behind the same middleware as REST (memory/mcp/http.py)
    path("mcp/<str:space_id>", mcp_http.endpoint),
    path("healthz", health.healthz),
    path("readyz", health.readyz),
    path("metrics", endpoint.metrics),
    # Django admin's login behind the same limiter as the console's (reviews/ratelimit.py)
    path("admin/login/", limited(admin.site.login)),
    path("admin/", admin.site.urls),
    path("console/", include("reviews.urls")),
]
