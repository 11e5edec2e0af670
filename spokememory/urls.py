from django.contrib import admin
from django.urls import include, path

from memory.dispatch import views

urlpatterns = [
    path("v1/ops/<str:op>", views.OpView.as_view()),
    path("v1/connect", views.ConnectView.as_view()),
    path("v1/disconnect", views.DisconnectView.as_view()),
    path("v1/manifest", views.manifest),
    path("v1/openapi.json", views.openapi),
    path("v1/docs", views.api_docs),
    path("healthz", views.healthz),
    path("readyz", views.readyz),
    path("admin/", admin.site.urls),
    path("console/", include("reviews.urls")),
]
