"""One limiter on every login: the console's, Django admin's (/admin/login/) and anything else
that calls `django.contrib.auth.authenticate` with a request. Counts live in Django's cache (a
Redis cache shared by every web process when SPOKE_MEMORY_CACHE_URL or REDIS_URL is set, see
docs/deployment.md), in fixed windows of WINDOW_S, in two separate buckets:

- per username tried: MAX_ATTEMPTS failures lock that account's logins for the window, from
  any address (many addresses guessing one password get no further than one);
- per client address: MAX_ADDRESS_ATTEMPTS failures, over whatever usernames, lock that
  address; it is higher, so one user's typos do not lock out colleagues behind the same NAT.

A success resets its username's bucket only (an attacker with one valid account can't reset
its address's count). The client address is REMOTE_ADDR, or, only when
SPOKE_MEMORY_TRUSTED_PROXY_HEADER names a header the trusted proxies set, the address those
proxies saw (the SPOKE_MEMORY_TRUSTED_PROXY_COUNT-th entry from the right).

A cache that cannot be reached (Redis down) fails closed: no login is tried, the login views
answer 503 with Retry-After, and any other `authenticate` caller is refused; unlimited password
guessing for the length of an outage is worse than a console that waits for Redis
(docs/reliability.md#faults)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse

log = logging.getLogger("reviews.ratelimit")
UNAVAILABLE_RETRY_AFTER_S = 30


class LimiterUnavailable(Exception):
    """The limiter's cache cannot be reached, so it cannot tell whether a login is allowed."""


# The configured values (settings are read again on each call, so tests may override them).
MAX_ATTEMPTS = settings.SPOKE_MEMORY_LOGIN_MAX_ATTEMPTS
MAX_ADDRESS_ATTEMPTS = settings.SPOKE_MEMORY_LOGIN_MAX_ADDRESS_ATTEMPTS
WINDOW_S = settings.SPOKE_MEMORY_LOGIN_WINDOW_S


def client_address(request: HttpRequest) -> str:
    header = settings.SPOKE_MEMORY_TRUSTED_PROXY_HEADER
    if header:
        hops: list[str] = [h.strip() for h in request.META.get(header, "").split(",") if h.strip()]
        count = settings.SPOKE_MEMORY_TRUSTED_PROXY_COUNT
        if len(hops) >= count:
            return hops[-count]
    address: str = request.META.get("REMOTE_ADDR", "")
    return address


def _key(kind: str, value: str) -> str:
    return f"login-limit:{kind}:" + hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()


def _user_key(username: str) -> str:
    return _key("user", username.strip().lower())


def _address_key(address: str) -> str:
    return _key("addr", address)


def blocked(address: str, username: str) -> bool:
    """Whether this username or address is over its count; LimiterUnavailable if the count
    cannot be read."""
    try:
        counts = cache.get_many([_user_key(username), _address_key(address)])
    except Exception as exc:  # noqa: BLE001 - any cache failure: the counts are unreachable
        log.warning("login limiter unavailable: its cache is unreachable (%s)", type(exc).__name__)
        raise LimiterUnavailable from exc
    return (counts.get(_user_key(username)) or 0) >= settings.SPOKE_MEMORY_LOGIN_MAX_ATTEMPTS or (
        counts.get(_address_key(address)) or 0
    ) >= settings.SPOKE_MEMORY_LOGIN_MAX_ADDRESS_ATTEMPTS


def record_failure(address: str, username: str) -> None:
    try:
        for key in (_user_key(username), _address_key(address)):
            window = settings.SPOKE_MEMORY_LOGIN_WINDOW_S
            if cache.add(key, 1, window):
                continue
            try:
                cache.incr(key)
            except ValueError:  # expired between add and incr
                cache.add(key, 1, window)
    except Exception as exc:  # noqa: BLE001 - the cache went away after the check; next try is refused
        log.warning(
            "login failure not counted: the limiter's cache is unreachable (%s)", type(exc).__name__
        )


def reset(username: str) -> None:
    try:
        cache.delete(_user_key(username))
    except Exception as exc:  # noqa: BLE001 - the login stands; the count expires with its window
        log.warning(
            "login count not reset: the limiter's cache is unreachable (%s)", type(exc).__name__
        )


def request_blocked(request: HttpRequest) -> bool:
    return blocked(client_address(request), request.POST.get("username", ""))


class LoginLimitBackend:
    """First in AUTHENTICATION_BACKENDS: a blocked username or address authenticates nowhere,
    whatever the password and whichever login view asked."""

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, **_: Any
    ) -> None:
        try:
            if request is not None and blocked(client_address(request), username or ""):
                raise PermissionDenied("too many failed logins")
        except LimiterUnavailable:
            raise PermissionDenied("the login limiter cannot count") from None
        return None

    # No get_user: this backend never logs anyone in, so no session names it (and
    # Client.force_login, which picks the first backend with get_user, skips it).


@receiver(user_login_failed)
def _count_failure(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any
) -> None:
    if request is not None:
        record_failure(client_address(request), str(credentials.get("username", "")))


@receiver(user_logged_in)
def _clear_on_success(
    sender: Any, request: HttpRequest | None, user: AbstractBaseUser, **_: Any
) -> None:
    reset(user.get_username())


def too_many() -> HttpResponse:
    response = HttpResponse(
        "Too many failed login attempts. Wait a few minutes and try again.\n",
        status=429,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(settings.SPOKE_MEMORY_LOGIN_WINDOW_S)
    return response


def unavailable() -> HttpResponse:
    response = HttpResponse(
        "Logging in is unavailable for a moment. Try again shortly.\n",
        status=503,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER_S)
    return response


def limited(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A login view behind the limiter: a POST while blocked answers 429 without trying, and
    503 while the limiter cannot count."""

    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            if request.method == "POST" and request_blocked(request):
                return too_many()
        except LimiterUnavailable:
            return unavailable()
        return view(request, *args, **kwargs)

    return wrapper
