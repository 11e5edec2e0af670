"""The limiter: one admission for every wire request, REST (memory/dispatch/views.py) and MCP
(memory/dispatch/edge.py), before any per-item work (docs/decisions/limiter.md).

Who is counted: the principal, and its tenant: the space whose operators made it
(`Principal.home_space`), so the N principals of one space share that space's budgets. A
principal with no home space (made by `manage.py spoke`, by server operators) is a tenant of its
own. The space a request names is not its tenant: a grantee's load never spends the budget of
the space that granted it.

What is counted, each per principal and per space:
- cost units in a sliding window (SPOKE_MEMORY_RATE, or the principal's own `set-rate`;
  SPOKE_MEMORY_SPACE_RATE): an op's cost is declared with the op registry
  (`memory.ops.base.op_cost`), one unit on admission, the rest once its body is parsed;
- request bytes in a one-minute sliding window (limits.max_request_bytes_per_min), a body
  refused as invalid counting REFUSED_BODY_WEIGHT times its size in all;
- requests in flight (SPOKE_MEMORY_MAX_IN_FLIGHT): a semaphore whose holds are leases that
  expire after LEASE_S, so a process that dies holding one frees it.

Where: with a Redis cache (SPOKE_MEMORY_CACHE_URL, else REDIS_URL), in Redis: the `limits`
package's sliding window counters and a small Lua semaphore, atomic across every process and
host. A request's admission (`admit`: its rate unit, its bytes, its place in flight) is one Lua
script (ADMIT: the package's window script once per counter, then the semaphore), one round
trip; giving the place back is another; the rest of an op's cost, once its body is parsed, one
more per counter through the package itself, on the same keys. Without Redis (the embedded
default), in this process. Redis unreachable: this process's own store counts instead for
FALLBACK_S, then Redis is tried again, with a warning logged: limits keep holding, per process,
and nothing answers 5xx for it.

Refusal: `429 rate_limited` with Retry-After, the request's body unread."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import redis
from django.conf import settings
from limits import RateLimitItem, RateLimitItemPerMinute, parse
from limits.errors import StorageError
from limits.storage import MemoryStorage, Storage, storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter
from ulid import ULID

from memory.models import Principal
from memory.observability import metrics
from memory.wire.errors import RateLimited

log = logging.getLogger("memory.limits")

REFUSED_BODY_WEIGHT = 16  # a body refused as invalid costs the byte budget 16 times its size
LEASE_S = 60  # a request's hold on an in-flight place expires after this (a dead process's)
FALLBACK_S = 10  # Redis unreachable: this process counts alone for this long, then tries again

OVER_RATE = "Too many requests: slow down and retry later."
OVER_BYTES = (
    "Too many request bytes this minute (limits.max_request_bytes_per_min): retry later. "
    "Refused bodies count several times their size."
)
IN_FLIGHT = "Too many requests of this caller in flight at once: wait for an answer first."

# The semaphore: KEYS the semaphores, `caps` each one's cap. All or nothing: 0 when a place was
# taken in every one, else the number of the first one that is full.
_PLACES = """
local function places(keys, caps, holder, lease)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
  for i, key in ipairs(keys) do
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    if redis.call('ZCARD', key) >= caps[i] then return i end
  end
  for _, key in ipairs(keys) do
    redis.call('ZADD', key, now + lease, holder)
    redis.call('EXPIRE', key, math.ceil(lease) + 1)
  end
  return 0
end
"""
# ARGV: the holder, the lease (s), then each key's cap.
ACQUIRE = (
    _PLACES
    + """
local caps = {}
for i = 3, #ARGV do caps[#caps + 1] = tonumber(ARGV[i]) end
return places(KEYS, caps, ARGV[1], tonumber(ARGV[2]))
"""
)
# One sliding window counter: the `limits` package's own script (5.x,
# resources/redis/lua_scripts/acquire_sliding_window.lua, MIT) as a function, on the package's
# keys (`_window_keys`), so `SlidingWindowCounterRateLimiter` reads and spends the same counts.
_WINDOW = """
local function window(previous, current, limit, expiry, amount)
  if amount > limit then return false end
  local current_ttl = tonumber(redis.call('pttl', current))
  if current_ttl > 0 and current_ttl < expiry then
    redis.call('rename', current, previous)
    redis.call('set', current, 0, 'PX', current_ttl + expiry)
  end
  local previous_count = tonumber(redis.call('get', previous)) or 0
  local previous_ttl = tonumber(redis.call('pttl', previous)) or 0
  local current_count = tonumber(redis.call('get', current)) or 0
  current_ttl = tonumber(redis.call('pttl', current)) or 0
  if previous_ttl <= 0 then previous_ttl = 0 end
  if current_ttl <= 0 then current_ttl = 0 end
  local weighted = math.floor(previous_count * previous_ttl / expiry) + current_count
  if (weighted + amount) > limit then return false end
  if redis.call('exists', current) == 1 then
    redis.call('incrby', current, amount)
  else
    redis.call('set', current, amount, 'PX', expiry * 2)
  end
  return true
end
"""
# A request's admission in one round trip. KEYS: each counter's previous and current window,
# then the semaphores; ARGV: the number of counters, the holder, the lease (s), each counter's
# limit, window (s) and amount, then each semaphore's cap. In order, as `charge`, `charge_bytes`
# and `enter` one after the other: 0 when all passed, else the number of the first counter short
# (the ones before it stay spent), or the number of counters plus that of the first full
# semaphore.
ADMIT = (
    _WINDOW
    + _PLACES
    + """
local n = tonumber(ARGV[1])
for i = 1, n do
  local at = 3 + 3 * (i - 1)
  local limit, expiry = tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]) * 1000
  if not window(KEYS[2 * i - 1], KEYS[2 * i], limit, expiry, tonumber(ARGV[at + 3])) then
    return i
  end
end
local keys, caps = {}, {}
for j = 2 * n + 1, #KEYS do
  keys[#keys + 1] = KEYS[j]
  caps[#caps + 1] = tonumber(ARGV[3 + 3 * n + #keys])
end
local full = places(keys, caps, ARGV[2], tonumber(ARGV[3]))
if full > 0 then return n + full end
return 0
"""
)


def rate_limited(wait: float | None, message: str = OVER_RATE) -> RateLimited:
    """The 429 of a caller over a limit, with the whole seconds to wait (REST and MCP)."""
    metrics.refused(_LIMIT_OF.get(message, "rate"))
    err = RateLimited(message)
    err.headers["Retry-After"] = str(max(1, int((wait or 1) + 0.999)))
    return err


# Which limit a 429's message names (memory/observability/metrics.py `refused`).
_LIMIT_OF = {OVER_BYTES: "bytes", IN_FLIGHT: "in_flight"}


@cache
def parse_rate(rate: str) -> RateLimitItem:
    """`N/s`, `N/min`, `N/hour`, `N/day` (the first letter of the period counts, as in
    `manage.py spoke set-rate`), or any rate string the `limits` package reads."""
    number, _, period = rate.partition("/")
    unit = {"s": "second", "m": "minute", "h": "hour", "d": "day"}.get(period.strip()[:1])
    if number.strip().isdigit() and unit:
        return parse(f"{int(number)}/{unit}")
    return parse(rate)


class Local:
    """This process's semaphores (the embedded default, and Redis's stand-in while it is down)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}

    def acquire(self, keys: list[str], caps: list[int], holder: str) -> int:
        with self._lock:
            for i, (key, cap) in enumerate(zip(keys, caps, strict=True), 1):
                if self._held.get(key, 0) >= cap:
                    return i
            for key in keys:
                self._held[key] = self._held.get(key, 0) + 1
        return 0

    def release(self, keys: list[str], holder: str) -> None:
        with self._lock:
            for key in keys:
                left = self._held.get(key, 0) - 1
                if left > 0:
                    self._held[key] = left
                else:
                    self._held.pop(key, None)


class Shared:
    """The semaphores in Redis (`ACQUIRE`), each hold a lease; and a whole admission (`ADMIT`)."""

    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self._acquire = client.register_script(ACQUIRE)
        self._admit = client.register_script(ADMIT)

    def admit(
        self,
        windows: list[tuple[RateLimitItem, str, int]],
        keys: list[str],
        caps: list[int],
        holder: str,
    ) -> int:
        """ADMIT: each (limit, key, amount) window spent in order, then a place in each
        semaphore; 0, or the number of the first one short (windows first)."""
        names: list[str] = []
        args: list[Any] = [len(windows), holder, LEASE_S]
        for item, key, amount in windows:
            names += _window_keys(item, key)
            args += [item.amount, item.get_expiry(), amount]
        return int(self._admit(keys=[*names, *keys], args=[*args, *caps]))

    def acquire(self, keys: list[str], caps: list[int], holder: str) -> int:
        return int(self._acquire(keys=keys, args=[holder, LEASE_S, *caps]))

    def release(self, keys: list[str], holder: str) -> None:
        pipe = self._client.pipeline(transaction=False)
        for key in keys:
            pipe.zrem(key, holder)
        pipe.execute()


@dataclass
class Store:
    windows: SlidingWindowCounterRateLimiter
    places: Local | Shared
    shared: bool


@dataclass
class Hold:
    """A request's places in flight, given back by `release` (REST and MCP call it in a
    `finally`); `store` is where they were taken."""

    keys: list[str]
    holder: str
    store: Store | None
    released: bool = field(default=False)


class Limiter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local = Store(SlidingWindowCounterRateLimiter(MemoryStorage()), Local(), False)
        self._shared: Store | None = None
        self._down_until = 0.0
        self._warned_at = 0.0

    def _redis_url(self) -> str:
        """The Redis of Django's cache (SPOKE_MEMORY_CACHE_URL, else REDIS_URL), or ''."""
        cache: dict[str, Any] = settings.CACHES["default"]
        return str(cache["LOCATION"]) if str(cache["BACKEND"]).endswith("RedisCache") else ""

    def store(self) -> Store:
        url = self._redis_url()
        if not url or time.monotonic() < self._down_until:
            return self._local
        with self._lock:
            if self._shared is None:
                self._shared = _shared_store(url, _prefix())
        return self._shared

    def _down(self, exc: BaseException) -> Store:
        """Redis did not answer: this process's store for FALLBACK_S, with a warning at most
        every FALLBACK_S."""
        at = time.monotonic()
        self._down_until = at + FALLBACK_S
        if at - self._warned_at >= FALLBACK_S:
            self._warned_at = at
            log.warning(
                "limiter: Redis unreachable (%s); counting in this process for %d s",
                type(exc).__name__,
                FALLBACK_S,
            )
        return self._local

    def _hit(
        self,
        items: list[tuple[RateLimitItem, str]],
        cost: int,
        message: str,
        saturate: bool = False,
    ) -> None:
        """Spend `cost` of each (limit, key), in order; the first one short refuses the request
        (the ones before it stay spent: a refused request still costs its principal). With
        `saturate`, a limit short of `cost` is spent to its end instead (a penalty)."""
        if cost <= 0:
            return
        store = self.store()
        try:
            self._hit_in(store, items, cost, message, saturate)
        except (StorageError, redis.RedisError, OSError) as exc:
            self._hit_in(self._down(exc), items, cost, message, saturate)

    @staticmethod
    def _hit_in(
        store: Store,
        items: list[tuple[RateLimitItem, str]],
        cost: int,
        message: str,
        saturate: bool,
    ) -> None:
        for item, key in items:
            # A cost above the whole limit could never pass: it spends the whole limit instead.
            if store.windows.hit(item, key, cost=min(cost, item.amount)):
                continue
            stats = store.windows.get_window_stats(item, key)
            if saturate and stats.remaining > 0:
                store.windows.hit(item, key, cost=stats.remaining)
            if not saturate:
                raise rate_limited(stats.reset_time - time.time(), message)

    def charge(self, principal: Principal, cost: int) -> None:
        """`cost` units of the principal's and its space's request rates; 429 when over."""
        self._hit(_rates(principal), cost, OVER_RATE)

    def charge_bytes(self, principal: Principal, size: int, saturate: bool = False) -> None:
        """`size` bytes of the principal's and its space's minute (0: no budget); 429 when
        over. Counted from the declared length, before the body is read."""
        self._hit(_byte_budgets(principal), size, OVER_BYTES, saturate)

    def refused_body(self, principal: Principal, size: int) -> None:
        """A body refused as invalid (400, 413) costs REFUSED_BODY_WEIGHT times its size in
        all: what costs the server most to judge and a well-behaved client least to avoid.
        Counted (to the end of the minute's budget at most), never refused here: the request
        already has its answer."""
        self.charge_bytes(principal, (REFUSED_BODY_WEIGHT - 1) * size, saturate=True)

    def enter(self, principal: Principal) -> Hold:
        """A place among the principal's and its space's requests in flight, or 429."""
        keys, caps = _places(principal)
        if not caps:
            return Hold(keys, "", None, released=True)
        holder = str(ULID())
        store = self.store()
        try:
            full = store.places.acquire(_prefixed(keys), caps, holder)
        except (redis.RedisError, OSError) as exc:
            store = self._down(exc)
            full = store.places.acquire(_prefixed(keys), caps, holder)
        if full:
            raise rate_limited(1, IN_FLIGHT)
        return Hold(keys, holder, store)

    def admit(self, principal: Principal, size: int) -> Hold:
        """A request's admission, before its body is read: a unit of the principal's and its
        space's rates (`charge`), its `size` bytes of their minutes (`charge_bytes`), a place
        among their requests in flight (`enter`), in that order; 429 at the first one short.
        With Redis one round trip (ADMIT), with the same outcome as the three one after the
        other, which is what the embedded store (and Redis's stand-in while it is down) runs."""
        store = self.store()
        if store.shared and isinstance(store.places, Shared):
            windows = [(item, key, 1, OVER_RATE) for item, key in _rates(principal)]
            if size > 0:
                windows += [
                    (item, key, min(size, item.amount), OVER_BYTES)
                    for item, key in _byte_budgets(principal)
                ]
            keys, caps = _places(principal)
            holder = str(ULID()) if caps else ""
            try:
                short = store.places.admit(
                    [(item, key, amount) for item, key, amount, _ in windows],
                    _prefixed(keys) if caps else [],
                    caps,
                    holder,
                )
            except (redis.RedisError, OSError) as exc:
                self._down(exc)
            else:
                if not short:
                    return Hold(keys, holder, store, released=not caps)
                if short > len(windows):
                    raise rate_limited(1, IN_FLIGHT)
                item, key, _, message = windows[short - 1]
                raise rate_limited(self._wait(store, item, key), message)
        self.charge(principal, 1)
        self.charge_bytes(principal, size)
        return self.enter(principal)

    def _wait(self, store: Store, item: RateLimitItem, key: str) -> float | None:
        """Seconds until the counter has room again (the 429's Retry-After)."""
        try:
            return store.windows.get_window_stats(item, key).reset_time - time.time()
        except (StorageError, redis.RedisError, OSError):
            return None

    def leave(self, hold: Hold) -> None:
        if hold.released or hold.store is None:
            return
        hold.released = True
        try:
            hold.store.places.release(_prefixed(hold.keys), hold.holder)
        except (redis.RedisError, OSError) as exc:
            self._down(exc)  # the lease expires on its own


def _who(principal: Principal) -> str:
    return f"principal:{principal.principal_id}"


def _rates(principal: Principal) -> list[tuple[RateLimitItem, str]]:
    """The principal's rate (its own `set-rate`, else SPOKE_MEMORY_RATE) and its space's."""
    items = [(parse_rate(principal.rate or settings.SPOKE_MEMORY_RATE), _who(principal))]
    if principal.home_space_id:
        items.append(
            (parse_rate(settings.SPOKE_MEMORY_SPACE_RATE), f"space:{principal.home_space_id}")
        )
    return items


def _byte_budgets(principal: Principal) -> list[tuple[RateLimitItem, str]]:
    """The principal's and its space's bytes a minute (none when the budget is 0)."""
    budget = settings.SPOKE_MEMORY_LIMITS["max_request_bytes_per_min"]
    if budget <= 0:
        return []
    item: RateLimitItem = RateLimitItemPerMinute(budget)
    items = [(item, "bytes:" + _who(principal))]
    if principal.home_space_id:
        items.append((item, f"bytes:space:{principal.home_space_id}"))
    return items


def _places(principal: Principal) -> tuple[list[str], list[int]]:
    """The principal's and its space's semaphores (unprefixed) and their caps (none: no cap)."""
    cap = settings.SPOKE_MEMORY_MAX_IN_FLIGHT
    keys = [f"flight:{_who(principal)}"]
    if principal.home_space_id:
        keys.append(f"flight:space:{principal.home_space_id}")
    return keys, ([cap] * len(keys) if cap > 0 else [])


def _window_keys(item: RateLimitItem, key: str) -> list[str]:
    """The previous and the current window of a sliding window counter in Redis, named as the
    `limits` package's Redis storage names them (tests/hostile/test_limiter.py checks)."""
    name = f"{_prefix()}:limits:{{{item.key_for(key)}}}"
    return [f"{name}/-1", name]


def _prefix() -> str:
    cache: dict[str, Any] = settings.CACHES["default"]
    return str(cache.get("KEY_PREFIX") or "spoke-memory")


def _prefixed(keys: list[str]) -> list[str]:
    return [f"{_prefix()}:limits:{key}" for key in keys]


@cache
def _shared_store(url: str, prefix: str) -> Store:
    timeout = settings.SPOKE_MEMORY_CACHE_OPTIONS["socket_timeout"]
    storage = storage_from_string(
        url,
        socket_connect_timeout=timeout,
        socket_timeout=timeout,
        key_prefix=f"{prefix}:limits",
        wrap_exceptions=True,
    )
    if not isinstance(storage, Storage):  # pragma: no cover - a redis:// URL is never async
        raise TypeError("the limiter needs a synchronous storage")
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    return Store(SlidingWindowCounterRateLimiter(storage), Shared(client), True)


LIMITER = Limiter()
