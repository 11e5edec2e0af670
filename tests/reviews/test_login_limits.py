"""Issue 13, item 5: every login (the console's and /admin/login/) behind one limiter, counting
per username and per client address separately, the client address from a trusted proxy header
only when one is configured, and counts shared by every process through a Redis cache."""

from __future__ import annotations

import http.cookiejar
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client, override_settings

from reviews import ratelimit
from tests.conftest import free_port
from tests.reviews.conftest import PASSWORD, make_user
from tests.reviews.jobs import _jobs

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
WRONG = "not the password"
USER_MAX = settings.SPOKE_MEMORY_LOGIN_MAX_ATTEMPTS
ADDRESS_MAX = 8  # the address bucket's limit in these tests (default 50)


@pytest.fixture(autouse=True)
def _quick(settings):
    settings.SPOKE_MEMORY_LOGIN_MAX_ADDRESS_ATTEMPTS = ADDRESS_MAX
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def staff(space):
    return make_user("operator", staff=True, superuser=True)[0]


def console_login(client: Client, username: str, password: str, **meta):
    return client.post("/console/login/", {"username": username, "password": password}, **meta)


def admin_login(client: Client, username: str, password: str, **meta):
    body = {"username": username, "password": password, "next": "/admin/"}
    return client.post("/admin/login/", body, **meta)


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_admin_login_is_limited_and_the_right_password_then_fails(staff):
    client = Client()
    for _ in range(USER_MAX):
        assert admin_login(client, "operator", WRONG).status_code == 200
    response = admin_login(client, "operator", PASSWORD)
    assert response.status_code == 429 and response["Retry-After"]
    assert not logged_in(client)
    # the one limiter: the console refuses the same account too
    assert console_login(client, "operator", PASSWORD).status_code == 429
    assert not logged_in(client) and client.get("/console/").status_code == 302


def test_console_failures_lock_the_admin_login_too(staff):
    client = Client()
    for _ in range(USER_MAX):
        console_login(client, "operator", WRONG)
    assert admin_login(client, "operator", PASSWORD).status_code == 429
    assert not logged_in(client)


def test_no_login_path_gets_past_a_blocked_account(staff):
    """Even a view that calls authenticate() without the limiter's wrapper: the backend stops it."""
    from django.contrib.auth import authenticate
    from django.test import RequestFactory

    for _ in range(USER_MAX):
        console_login(Client(), "operator", WRONG)
    request = RequestFactory().post("/elsewhere/")
    assert authenticate(request, username="operator", password=PASSWORD) is None


def test_one_users_failures_do_not_lock_out_another_from_the_same_address(staff):
    make_user("colleague")
    client = Client()
    for _ in range(USER_MAX):
        console_login(client, "operator", WRONG)
    assert console_login(client, "operator", PASSWORD).status_code == 429
    other = Client()
    response = console_login(other, "colleague", PASSWORD)
    assert response.status_code == 302 and logged_in(other)


def test_the_username_bucket_holds_from_any_address(staff):
    for n in range(USER_MAX):
        console_login(Client(), "operator", WRONG, REMOTE_ADDR=f"10.0.0.{n}")
    response = console_login(Client(), "operator", PASSWORD, REMOTE_ADDR="10.9.9.9")
    assert response.status_code == 429


def test_the_address_bucket_stops_one_address_trying_many_usernames(staff):
    for n in range(ADDRESS_MAX):
        console_login(Client(), f"guess{n}", WRONG, REMOTE_ADDR="10.1.1.1")
    assert console_login(Client(), "operator", PASSWORD, REMOTE_ADDR="10.1.1.1").status_code == 429
    elsewhere = Client()
    assert console_login(elsewhere, "operator", PASSWORD, REMOTE_ADDR="10.2.2.2").status_code == 302


def test_a_forwarded_header_is_ignored_unless_a_trusted_proxy_is_configured(staff):
    for n in range(ADDRESS_MAX):
        console_login(
            Client(), f"guess{n}", WRONG, REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR=f"1.2.3.{n}"
        )
    response = console_login(
        Client(), "operator", PASSWORD, REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR="9.9.9.9"
    )
    assert response.status_code == 429


@override_settings(SPOKE_MEMORY_TRUSTED_PROXY_HEADER="HTTP_X_FORWARDED_FOR")
def test_behind_a_trusted_proxy_the_address_is_the_one_the_proxy_saw(staff):
    proxy = {"REMOTE_ADDR": "10.0.0.1"}
    for n in range(ADDRESS_MAX):
        # a client may prepend anything; the proxy appends the address it saw (the last entry)
        forged = {"HTTP_X_FORWARDED_FOR": f"7.7.7.{n}, 203.0.113.5"}
        console_login(Client(), f"guess{n}", WRONG, **proxy, **forged)
    blocked = {"HTTP_X_FORWARDED_FOR": "203.0.113.5"}
    assert console_login(Client(), "operator", PASSWORD, **proxy, **blocked).status_code == 429
    other = Client()
    fine = {"HTTP_X_FORWARDED_FOR": "203.0.113.5, 198.51.100.7"}
    assert console_login(other, "operator", PASSWORD, **proxy, **fine).status_code == 302


# --- two processes, one Redis cache --------------------------------------------------------------
def _redis_url() -> str | None:
    url = os.environ.get("SPOKE_MEMORY_CACHE_URL") or os.environ.get("REDIS_URL")
    if url is None and settings.CELERY_BROKER_URL.startswith("redis://"):
        url = settings.CELERY_BROKER_URL
    if url is None:
        return None
    host = urllib.parse.urlsplit(url)
    try:
        socket.create_connection((host.hostname, host.port or 6379), timeout=2).close()
    except OSError:
        return None
    return url


class Browser:
    """A plain HTTP client with cookies, for the server subprocess (CSRF token from the form)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()),
            NoRedirect(),
        )

    def get(self, path: str) -> tuple[int, str]:
        try:
            with self.opener.open(self.base + path) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def post_form(self, path: str, fields: dict) -> int:
        _, page = self.get(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        data = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": token}).encode()
        try:
            with self.opener.open(self.base + path, data=data) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.mark.django_db(transaction=True)
def test_two_processes_share_the_counts_through_redis(space):
    url = _redis_url()
    if url is None:
        pytest.skip("no Redis reachable (set SPOKE_MEMORY_CACHE_URL or a redis:// broker)")
    prefix = f"login-test-{os.getpid()}-{time.monotonic_ns()}"
    redis_cache = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": prefix,
        }
    }
    make_user("operator", staff=True, superuser=True)
    port = free_port()
    env = _jobs.worker_env(SPOKE_MEMORY_CACHE_URL=url, SPOKE_MEMORY_CACHE_PREFIX=prefix)
    env["DJANGO_SETTINGS_MODULE"] = "spokememory.settings"
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        other = Browser(f"http://127.0.0.1:{port}")
        for _ in range(600):
            try:
                if other.get("/healthz")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        with override_settings(CACHES=redis_cache):
            here = Client()
            for _ in range(USER_MAX - 2):  # failures in this process ...
                assert console_login(here, "operator", WRONG).status_code == 200
            for _ in range(2):  # ... and in the server process, on the admin login
                login = {"username": "operator", "password": WRONG, "next": "/admin/"}
                assert other.post_form("/admin/login/", login) == 200
            # both processes now refuse the right password, on either login
            login = {"username": "operator", "password": PASSWORD, "next": "/admin/"}
            assert other.post_form("/admin/login/", login) == 429
            assert other.post_form("/console/login/", login) == 429
            assert console_login(here, "operator", PASSWORD).status_code == 429
            assert admin_login(here, "operator", PASSWORD).status_code == 429
            ratelimit.reset("operator")
            assert admin_login(here, "operator", PASSWORD).status_code == 302
    finally:
        server.terminate()
        server.wait(timeout=30)
