"""The limiter (memory/limits.py; docs/decisions/limiter.md), where it runs: a space's principals
share its budgets, counted in Redis across every process of every server (here two gunicorn
servers of two workers each on one Redis), another space unaffected; refusal is `429
rate_limited` with Retry-After; a Redis that cannot be reached leaves each process counting on
its own (never a 5xx, never unlimited); the embedded default (no Redis) counts in process; the
cap on requests in flight holds across processes. Issue 39: before, every rule was per
principal, so six principals of one space were six tenants."""

# Loopback URLs only.
# ruff: noqa: S310

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from contextlib import ExitStack

import pytest
from django.conf import settings

from memory.wire.errors import RateLimited
from tests.conftest import make_space, requires_postgres
from tests.factories import make_principal
from tests.hostile.conftest import gunicorn
from tests.memory.jobs import worker_env

pytestmark = pytest.mark.django_db(transaction=True)

REDIS = settings.CELERY_BROKER_URL if settings.CELERY_BROKER_URL.startswith("redis") else ""
needs_redis = pytest.mark.skipif(not REDIS, reason="the suite's broker is not Redis")


def post(port: int, token: str, op: str = "memory.describe", body: dict | None = None):
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/ops/{op}",
        data=json.dumps(body or {}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, dict(answer.headers), json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), json.loads(err.read())


def servers(tmp_path, count: int, **env: str) -> tuple[ExitStack, list[int]]:
    stack = ExitStack()
    ports = []
    for n in range(count):
        folder = tmp_path / f"server{n}"
        folder.mkdir()
        ports.append(
            stack.enter_context(
                gunicorn(folder, worker_env(WEB_CONCURRENCY="2", GUNICORN_THREADS="2", **env))
            )
        )
    return stack, ports


@needs_redis
def test_one_spaces_principals_share_its_budget_across_servers_another_space_goes_on(tmp_path):
    """Six principals made by space A's operators (home space A), each far under its own rate,
    spread over two servers: together they spend A's SPOKE_MEMORY_SPACE_RATE (12 a minute),
    then each of them is refused 429 with Retry-After; a principal of space B is not."""
    a, b = make_space("sa"), make_space("sb")
    six = [make_principal(f"a{n}", home_space=a)[1] for n in range(6)]
    other = make_principal("b0", home_space=b)[1]
    stack, ports = servers(
        tmp_path, 2, SPOKE_MEMORY_CACHE_URL=REDIS, SPOKE_MEMORY_SPACE_RATE="12/min"
    )
    with stack:
        answered = [post(ports[n % 2], six[n % 6])[0] for n in range(12)]
        assert answered == [200] * 12
        for n, token in enumerate(six):
            status, headers, body = post(ports[n % 2], token)
            assert (status, body["error"]["code"]) == (429, "rate_limited"), body
            assert 1 <= int(headers["Retry-After"]) <= 60
        for port in ports:
            assert post(port, other)[0] == 200


@needs_redis
def test_a_principals_own_rate_is_counted_once_across_servers(tmp_path):
    _, token = make_principal("app")
    stack, ports = servers(tmp_path, 2, SPOKE_MEMORY_CACHE_URL=REDIS, SPOKE_MEMORY_RATE="4/min")
    with stack:
        assert [post(ports[n % 2], token)[0] for n in range(4)] == [200] * 4
        assert [post(port, token)[0] for port in ports] == [429, 429]


def test_redis_unreachable_each_process_counts_alone_never_a_5xx(tmp_path):
    """A Redis on a port nothing listens on: requests are answered (the limiter's store falls
    back to the process's own), and a principal over its rate is still refused."""
    _, token = make_principal("app")
    env = worker_env(
        WEB_CONCURRENCY="1",
        GUNICORN_THREADS="2",
        SPOKE_MEMORY_CACHE_URL="redis://127.0.0.1:1/1",
        SPOKE_MEMORY_RATE="3/min",
    )
    with gunicorn(tmp_path, env) as port:
        answered = [post(port, token)[0] for _ in range(4)]
    assert answered == [200, 200, 200, 429]
    assert "limiter: Redis unreachable" in (tmp_path / "gunicorn.log").read_text()


def test_the_embedded_store_shares_a_spaces_budget(api, settings):
    """No Redis (the embedded default): the same rules, counted in this process."""
    settings.SPOKE_MEMORY_SPACE_RATE = "4/min"
    a, b = make_space("ea"), make_space("eb")
    first, second = (make_principal(n, home_space=a) for n in ("e1", "e2"))
    other = make_principal("e3", home_space=b)
    who = [first, second, first, second]
    assert [api.raw("/v1/ops/memory.describe", "{}", token=t).status for _, t in who] == [200] * 4
    refused = api.raw("/v1/ops/memory.describe", "{}", token=second[1])
    assert (refused.status, refused.code) == (429, "rate_limited")
    assert int(refused.headers["Retry-After"]) >= 1
    assert api.raw("/v1/ops/memory.describe", "{}", token=other[1]).status == 200


def test_an_ops_declared_cost_is_charged(api, settings):
    """A page of 200 costs 4 units (memory.ops.base.op_cost): a rate of 5 allows one such
    listing and one describe, then refuses."""
    settings.SPOKE_MEMORY_RATE = "5/min"
    _, token = make_principal("lister")
    body = json.dumps({"space_id": "nowhere", "page_size": 200})
    assert api.raw("/v1/ops/memory.records.list", body, token=token).status == 404
    assert api.raw("/v1/ops/memory.describe", "{}", token=token).status == 200
    assert api.raw("/v1/ops/memory.describe", "{}", token=token).code == "rate_limited"


def held(limiter, principal, times: int) -> list:
    return [limiter.enter(principal) for _ in range(times)]


@pytest.mark.parametrize("shared", [True, False], ids=["redis", "embedded"])
def test_requests_in_flight_are_capped_per_principal_and_per_space(settings, shared):
    """Two limiters stand for two processes (with Redis they share its semaphores)."""
    from memory.limits import Limiter

    if shared and not REDIS:
        pytest.skip("the suite's broker is not Redis")
    if shared:
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": REDIS,
                "KEY_PREFIX": "limiter-test",
            }
        }
    settings.SPOKE_MEMORY_MAX_IN_FLIGHT = 2
    here = Limiter()
    there = Limiter() if shared else here
    space = make_space("fa")
    one, two = (make_principal(n, home_space=space)[0] for n in ("f1", "f2"))
    loner = make_principal("f3")[0]
    first = here.enter(one)
    second = there.enter(two)
    with pytest.raises(RateLimited) as refused:
        there.enter(one)  # the space holds its two
    assert refused.value.headers["Retry-After"] == "1"
    taken = held(there, loner, 2)
    with pytest.raises(RateLimited):
        here.enter(loner)  # the principal holds its two
    here.leave(first)
    here.leave(first)  # given back once only
    third = here.enter(two)
    with pytest.raises(RateLimited):
        here.enter(one)
    for hold in (second, third, *taken):
        here.leave(hold)  # a hold is given back to the store it was taken in
    here.leave(here.enter(one))


def _redis_cache(settings, prefix: str) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS,
            "KEY_PREFIX": prefix,
        }
    }


@pytest.mark.parametrize("shared", [True, False], ids=["redis", "embedded"])
def test_an_admission_spends_a_unit_then_bytes_then_a_place_as_the_three_calls_do(settings, shared):
    """`admit` (with Redis one script, ADMIT) has the outcome of `charge`, `charge_bytes` and
    `enter` one after the other, counter for counter: what each request is refused for, and
    what is left of each of the four counters, read back through the `limits` package (so the
    script spends the very counts the package keeps: the rest of an op's cost is spent there)."""
    from memory.limits import (
        IN_FLIGHT,
        OVER_BYTES,
        OVER_RATE,
        Limiter,
        _byte_budgets,
        _rates,
    )

    if shared and not REDIS:
        pytest.skip("the suite's broker is not Redis")
    if shared:
        _redis_cache(settings, f"admit-test-{time.time_ns()}")
    else:
        settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    settings.SPOKE_MEMORY_RATE, settings.SPOKE_MEMORY_SPACE_RATE = "5/min", "4/min"
    settings.SPOKE_MEMORY_LIMITS = {
        **settings.SPOKE_MEMORY_LIMITS,
        "max_request_bytes_per_min": 100,
    }
    settings.SPOKE_MEMORY_MAX_IN_FLIGHT = 2
    limiter = Limiter()
    principal = make_principal("ad1", home_space=make_space("ad"))[0]

    def admit(size: int):
        try:
            return limiter.admit(principal, size)
        except RateLimited as refused:
            assert int(refused.headers["Retry-After"]) >= 1
            return refused.message

    first, second = admit(30), admit(30)
    assert not isinstance(first, str) and not isinstance(second, str)
    assert limiter.store().shared is shared
    assert admit(10) == IN_FLIGHT  # both places held; its unit and bytes are spent
    limiter.leave(first)
    assert admit(50) == OVER_BYTES  # 70 + 50 over the principal's 100; its unit is spent
    assert admit(0) == OVER_RATE  # the space's 4 units are spent
    windows = limiter.store().windows
    left = [windows.get_window_stats(i, k).remaining for i, k in _rates(principal)]
    left += [windows.get_window_stats(i, k).remaining for i, k in _byte_budgets(principal)]
    assert left == [0, 0, 30, 30]
    limiter.leave(second)
    settings.SPOKE_MEMORY_RATE = settings.SPOKE_MEMORY_SPACE_RATE = "100/min"
    limiter.leave(admit(1))  # the places were given back


@needs_redis
def test_an_admission_is_one_round_trip_to_redis(settings):
    """What Redis receives (MONITOR) for one admission of a principal with a home space (two
    rates, two byte budgets, two semaphores): one script call; giving the place back is one
    pipeline. Before: a script per counter and one for the semaphores, five round trips."""
    import redis

    from memory.limits import Limiter

    prefix = f"trips-test-{time.time_ns()}"
    _redis_cache(settings, prefix)
    limiter = Limiter()
    principal = make_principal("rt1", home_space=make_space("rt"))[0]
    limiter.leave(limiter.admit(principal, 10))  # the scripts loaded
    commands = []
    with redis.Redis.from_url(REDIS).monitor() as monitor:
        limiter.leave(limiter.admit(principal, 10))
        while monitor.connection is not None and monitor.connection.can_read(timeout=0.5):
            seen = monitor.next_command()
            if prefix in seen["command"] and seen.get("client_type") != "lua":
                commands.append(seen["command"].split(" ", 1)[0].upper())
    assert commands == ["EVALSHA", "ZREM", "ZREM"], commands


@pytest.mark.skipif(not REDIS, reason="the suite's broker is not Redis")
def test_a_hold_of_a_process_gone_expires(settings, monkeypatch):
    from memory import limits
    from memory.limits import Limiter

    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS,
            "KEY_PREFIX": "limiter-test",
        }
    }
    settings.SPOKE_MEMORY_MAX_IN_FLIGHT = 1
    monkeypatch.setattr(limits, "LEASE_S", 0.2)
    principal = make_principal("g1")[0]
    Limiter().enter(principal)  # never given back: its process died
    with pytest.raises(RateLimited):
        Limiter().enter(principal)
    time.sleep(0.4)  # past the lease (a wait for it, not a timed assertion)
    Limiter().enter(principal)


@pytest.mark.postgres
@requires_postgres
def test_a_web_process_bounds_its_statements(settings):
    """SPOKE_MEMORY_STATEMENT_TIMEOUT_MS on every connection a web process opens
    (spokememory/warm.py); a statement past it is cut, and answers 503, not 500."""
    from django.db import OperationalError, connections

    from memory.outage import is_outage
    from spokememory.warm import bound_statements

    settings.SPOKE_MEMORY_STATEMENT_TIMEOUT_MS = 200
    bound_statements()
    fresh = connections.create_connection("default")
    try:
        with fresh.cursor() as cursor:
            cursor.execute("SHOW statement_timeout")
            assert cursor.fetchone()[0] == "200ms"
            cursor.execute("SHOW idle_in_transaction_session_timeout")
            assert cursor.fetchone()[0] == "200ms"
            with pytest.raises(OperationalError) as cut:
                cursor.execute("SELECT pg_sleep(5)")
        assert is_outage(cut.value)
    finally:
        fresh.close()
