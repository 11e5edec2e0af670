"""Login (rate-limited) and logout (POST only)."""

from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse

from reviews import ratelimit


def _address(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "")


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        username = request.POST.get("username", "")
        if ratelimit.blocked(_address(request), username):
            form = self.get_form()
            return self.render_to_response(
                self.get_context_data(form=form, blocked=True), status=429
            )
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        ratelimit.record_failure(_address(self.request), self.request.POST.get("username", ""))
        return super().form_invalid(form)

    def form_valid(self, form):
        ratelimit.reset(_address(self.request), self.request.POST.get("username", ""))
        return super().form_valid(form)


class LogoutView(auth_views.LogoutView):
    """Django's LogoutView already refuses GET (405); logging out is a POST with CSRF."""

    next_page = "reviews:login"
