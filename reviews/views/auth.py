"""Login (behind the one login limiter, reviews/ratelimit.py) and logout (POST only)."""

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse

from reviews import ratelimit


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # Failures are counted and successes reset by the limiter's signal receivers, for this
        # view and /admin/login/ alike; here a blocked attempt gets the console's own page.
        try:
            blocked = ratelimit.request_blocked(request)
        except ratelimit.LimiterUnavailable:
            # fails closed: no attempt the limiter cannot count (reviews/ratelimit.py)
            response = self.render_to_response(
                self.get_context_data(form=self.get_form(), unavailable=True), status=503
            )
            response["Retry-After"] = str(ratelimit.UNAVAILABLE_RETRY_AFTER_S)
            return response
        if blocked:
            form = self.get_form()
            response = self.render_to_response(
                self.get_context_data(form=form, blocked=True), status=429
            )
            response["Retry-After"] = str(settings.SPOKE_MEMORY_LOGIN_WINDOW_S)
            return response
        return super().post(request, *args, **kwargs)


class LogoutView(auth_views.LogoutView):
    """Django's LogoutView already refuses GET (405); logging out is a POST with CSRF."""

    next_page = "reviews:login"
