"""Login, logout, the layout's safety headers, the spaces page."""

import pytest
from django.test import Client

from reviews import ratelimit
from tests.reviews.conftest import PASSWORD, logged_in

pytestmark = pytest.mark.django_db


def test_console_requires_login(client):
    response = client.get("/console/")
    assert response.status_code == 302
    assert response["Location"].startswith("/console/login/")


def test_login_with_right_password_lands_on_spaces(moderator):
    client = Client()
    response = client.post(
        "/console/login/", {"username": "moderator", "password": PASSWORD}, follow=True
    )
    assert response.status_code == 200
    assert b"Your spaces" in response.content
    assert b"s1" in response.content


def test_wrong_password_is_refused(moderator):
    client = Client()
    response = client.post("/console/login/", {"username": "moderator", "password": "nope"})
    assert response.status_code == 200
    assert b"Wrong username or password" in response.content
    assert "_auth_user_id" not in client.session


def test_login_attempts_are_rate_limited_even_with_the_right_password(moderator):
    client = Client()
    for _ in range(ratelimit.MAX_ATTEMPTS):
        client.post("/console/login/", {"username": "moderator", "password": "nope"})
    response = client.post("/console/login/", {"username": "moderator", "password": PASSWORD})
    assert response.status_code == 429
    assert b"Too many failed attempts" in response.content
    assert "_auth_user_id" not in client.session


def test_a_success_resets_the_counter(moderator):
    client = Client()
    for _ in range(ratelimit.MAX_ATTEMPTS - 1):
        client.post("/console/login/", {"username": "moderator", "password": "nope"})
    client.post("/console/login/", {"username": "moderator", "password": PASSWORD})
    assert not ratelimit.blocked("127.0.0.1", "moderator")


def test_logout_is_post_only(mod):
    assert mod.get("/console/logout/").status_code == 405
    assert mod.get("/console/").status_code == 200
    response = mod.post("/console/logout/")
    assert response.status_code == 302
    assert mod.get("/console/").status_code == 302


def test_logout_needs_csrf(moderator):
    client = Client(enforce_csrf_checks=True)
    client.force_login(moderator)
    assert client.post("/console/logout/").status_code == 403
    assert client.get("/console/").status_code == 200


def test_csp_forbids_inline_script_and_pages_carry_no_inline_script(mod):
    response = mod.get("/console/")
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "object-src 'none'" in csp and "frame-ancestors 'none'" in csp
    html = response.content.decode()
    assert "<script>" not in html  # every script tag has a src
    assert html.count("<script src=") == 2


def test_htmx_is_vendored_and_csrf_goes_through_hx_headers(mod):
    html = mod.get("/console/").content.decode()
    assert "/static/vendor/htmx.min.js" in html
    assert 'hx-headers=\'{"X-CSRFToken": "' in html


def test_cookies_are_httponly_and_samesite(moderator):
    client = Client()
    response = client.post("/console/login/", {"username": "moderator", "password": PASSWORD})
    morsel = response.cookies["sessionid"]
    assert morsel["httponly"] and morsel["samesite"] == "Lax"


def test_user_without_a_principal_sees_no_space(db, space):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("lonely", password=PASSWORD)
    client = Client()
    client.force_login(user)
    response = client.get("/console/")
    assert b"not linked to a principal" in response.content
    assert client.get("/console/s/s1/queue/").status_code == 404


def test_spaces_page_lists_only_covered_spaces(mod, stranger):
    from memory.models import Space

    Space.objects.create(space_id="other", display_name="Other")
    assert b"other" not in mod.get("/console/").content
    client = Client()
    client.force_login(stranger)
    assert b"No space" in client.get("/console/").content


def test_spaces_page_shows_pending_candidates_per_space(mod, capture, stranger, give):
    capture("one", "two", "three")
    html = mod.get("/console/").content.decode()
    assert '<td class="pending-candidates"><a href="/console/s/s1/queue/">3</a></td>' in html
    give(stranger, "records_read")  # sees the space, may not read candidates
    other = logged_in(stranger).get("/console/").content.decode()
    assert '<td class="pending-candidates">—</td>' in other
