"""The review console (issue: moderation screens). An empty shell until its screens land."""
from django.urls import path
from django.views.generic import TemplateView

app_name = "reviews"
urlpatterns = [
    path("", TemplateView.as_view(template_name="reviews/home.html"), name="home"),
]
