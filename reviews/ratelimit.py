"""A small fixed-window limiter on login attempts, kept in Django's cache. Two buckets per
attempt: the client address and the username tried, so neither one address guessing many
passwords nor many addresses guessing one account's password gets far."""

from django.core.cache import cache

MAX_ATTEMPTS = 5
WINDOW_S = 300


def _keys(address: str, username: str) -> list[str]:
    return [f"console-login:addr:{address}", f"console-login:user:{username.lower()}"]


def blocked(address: str, username: str) -> bool:
    return any((cache.get(k) or 0) >= MAX_ATTEMPTS for k in _keys(address, username))


def record_failure(address: str, username: str) -> None:
    for key in _keys(address, username):
        if cache.add(key, 1, WINDOW_S):
            continue
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, WINDOW_S)


def reset(address: str, username: str) -> None:
    cache.delete_many(_keys(address, username))
