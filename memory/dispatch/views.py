"""The wire's op and session views. `OpView` runs the edge's gates of SPEC §1.4 in order (route,
method, token, session, throttle, body), then `memory.admission.admit`, then the op's handler;
every error leaves through `responses.error_response`. Discovery (manifest, OpenAPI, docs) is in
`discovery.py`, health in `health.py`."""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

from django.conf import settings
from django.core.cache import cache
from rest_framework.authentication import BaseAuthentication
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from memory.admission import (
    DEPTH_MESSAGE,
    admit,
    check_storable,
    check_value_depth,
    schema_error,
)
from memory.dispatch import auth
from memory.dispatch.neighbours import Neighbours
from memory.dispatch.responses import error_response, internal_error, json_response, outage
from memory.models import Principal
from memory.observability import metrics
from memory.ops.base import HANDLERS, OpContext
from memory.outage import is_outage
from memory.timeutil import now
from memory.wire.errors import (
    BadRequest,
    MethodNotAllowed,
    PayloadTooLarge,
    RateLimited,
    UnknownOp,
    WireError,
)
from memory.wire.validation import catalog, schema_errors

log = logging.getLogger("memory.dispatch")


class PrincipalThrottle(SimpleRateThrottle):
    """Per-principal request rate: the principal's own (`manage.py spoke set-rate`), else
    SPOKE_MEMORY_RATE. A fixed window counted with one atomic cache increment per request (DRF's
    sliding history rewrites a list as long as the rate on every request, which at an app's rate
    costs more than the request)."""

    scope = "principal"

    def get_cache_key(self, request, view) -> str | None:
        principal = getattr(request, "user", None)
        return None if principal is None else f"throttle:principal:{principal.principal_id}"

    def allow_request(self, request, view) -> bool:
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        own = getattr(request.user, "rate", None)
        limit, duration = self.parse_rate(own or self.rate)
        if limit is None or duration is None:
            return True
        at = self.timer()
        window = int(at // duration)
        self.key = f"{key}:{duration}:{window}"
        self.wait_s = (window + 1) * duration - at
        try:
            self.cache.add(self.key, 0, timeout=int(duration) + 1)
            try:
                count = self.cache.incr(self.key)
            except ValueError:  # expired between add and incr: a new window
                self.cache.set(self.key, 1, timeout=int(duration) + 1)
                count = 1
        except Exception as exc:  # noqa: BLE001 - any cache failure: the counter is unreachable
            _rate_unenforced(exc)
            return True
        return count <= limit

    def wait(self) -> float:
        return self.wait_s


_unenforced_logged_at = 0.0


def _rate_unenforced(exc: Exception) -> None:
    """The throttle's cache (Redis) cannot be reached: the request goes on uncounted (fail open;
    docs/reliability.md "Redis down" says why), with a warning at most every 10 s per process."""
    global _unenforced_logged_at
    at = time.monotonic()
    if at - _unenforced_logged_at >= 10:
        _unenforced_logged_at = at
        log.warning(
            "rate limit not enforced: the throttle's cache is unreachable (%s)", type(exc).__name__
        )


def rate_limited(
    wait: float | None, message: str = "Too many requests: slow down and retry later."
) -> RateLimited:
    """The 429 of a caller over its rate, with the whole seconds to wait (REST and MCP)."""
    metrics.refused(_LIMIT_OF.get(message, "rate"))
    err = RateLimited(message)
    err.headers["Retry-After"] = str(max(1, int((wait or 1) + 0.999)))
    return err


BUDGET_WINDOW_S = 60
OVER_BUDGET = (
    "Too many request bytes this minute (limits.max_request_bytes_per_min): retry later. "
    "Refused bodies count several times their size."
)


def charge_bytes(principal: Principal, size: int) -> float | None:
    """The per-principal byte budget (limits.max_request_bytes_per_min; docs/decisions.md "Byte
    budget"): `size` bytes are added to the principal's count of this minute, before the body
    is read or parsed; answers the seconds left in the minute when the count is now over the
    budget (the request is refused), else None. Counted in the throttle's cache (REST and MCP,
    every process sharing it); a cache that cannot be reached lets the request go on, as the
    throttle does."""
    budget = settings.SPOKE_MEMORY_LIMITS["max_request_bytes_per_min"]
    if budget <= 0:
        return None
    at = time.time()
    window = int(at // BUDGET_WINDOW_S)
    key = f"bytes:principal:{principal.principal_id}:{window}"
    try:
        cache.add(key, 0, timeout=BUDGET_WINDOW_S + 1)
        try:
            count = cache.incr(key, size)
        except ValueError:  # expired between add and incr: a new window
            cache.set(key, size, timeout=BUDGET_WINDOW_S + 1)
            count = size
    except Exception as exc:  # noqa: BLE001 - any cache failure: the counter is unreachable
        _rate_unenforced(exc)
        return None
    return (window + 1) * BUDGET_WINDOW_S - at if count > budget else None


def check_byte_budget(principal: Principal, size: int) -> None:
    """`charge_bytes`, raising the 429 of a principal over its budget (after `refuse`'s wait)."""
    wait = charge_bytes(principal, size)
    if wait is not None:
        raise refuse(principal, wait, OVER_BUDGET)


def charge_refused(principal: Principal, size: int) -> None:
    """A body refused as invalid (400 invalid_input, 413) costs the budget
    SPOKE_MEMORY_REFUSED_BODY_WEIGHT times its size in all: an invalid body is what costs the
    server most to judge and a well-behaved client least to avoid."""
    extra = (settings.SPOKE_MEMORY_REFUSED_BODY_WEIGHT - 1) * size
    if extra > 0:
        charge_bytes(principal, extra)


TOO_MANY_IN_FLIGHT = (
    "Too many requests of this caller in flight at once: wait for an answer before sending more."
)


class InFlight:
    """Each principal's requests in flight in this process (docs/decisions.md "Requests in
    flight"): while the process serves other principals too, a principal may hold at most
    SPOKE_MEMORY_MAX_IN_FLIGHT of its threads at once (default: GUNICORN_THREADS less one), so
    another tenant always finds one free; past it, `429 rate_limited` at once. A principal the
    process has served alone for SPOKE_MEMORY_IN_FLIGHT_WINDOW_S (an app calling with its one
    token) may use every thread: there is nobody to keep one for. Counted per process, in
    memory: a thread is a process's.

    It also keeps how many requests each principal holds here at once, running or waiting for
    their share (`CpuShare`), averaged over about MEAN_S seconds, and the highest such mean,
    fading over the window (`weights`): which principal is the heavier, for the CPU share."""

    PRUNE_AT = 64  # principals remembered before the ones not seen within the window are dropped
    MEAN_S = 1.0  # the time constant of a principal's mean of requests in flight
    LIGHTER_BY = 2.0  # another principal this many times as heavy makes a principal the lighter
    # the heavier principal pays its whole time while a lighter one was served this recently
    ACTIVE_S = 5.0
    MAX_SPACES = 8  # the spaces remembered per principal (its most recent)

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}
        self._seen: dict[str, float] = {}  # principal → when its last request took a slot
        # principal → (mean of its requests in flight here, highest mean, when last counted)
        self._load: dict[str, tuple[float, float, float]] = {}
        self._parallel: dict[str, float] = {}  # principal → when it last held two slots at once
        # principal → the spaces it was answered in here, each with when (at most MAX_SPACES)
        self._spaces: dict[str, dict[str, float]] = {}
        self._parked = 0
        self._local = threading.local()  # this thread's seconds held in `park`, in all
        # the server's other processes (`warm` sets it in a web worker; None: this one alone)
        self.neighbours: Neighbours | None = None

    def _seen_ago(self) -> dict[str, tuple[float, float, bool, frozenset[str]]]:
        """The principals served here within the window: the seconds since their last slot,
        their weight, whether they held two slots at once within the window, and the spaces
        they were answered in within it (`weights`)."""
        at = self._clock()
        since = at - settings.SPOKE_MEMORY_IN_FLIGHT_WINDOW_S
        with self._lock:
            return {
                p: (
                    at - t,
                    self._weight(p, at),
                    self._parallel.get(p, -math.inf) >= since,
                    self._spaces_of(p, since),
                )
                for p, t in self._seen.items()
                if t >= since
            }

    def _spaces_of(self, principal_id: str, since: float) -> frozenset[str]:
        """The spaces the principal was answered in here since `since` (under the lock)."""
        return frozenset(s for s, t in self._spaces.get(principal_id, {}).items() if t >= since)

    def served_in(self, principal_id: str, space_id: object) -> None:
        """The principal's op was answered in this space: principals answered in a common space
        within the window are one tenant, for the heavier-yields rule (`compared`). Called only
        once an op has succeeded, so naming a space one cannot reach says nothing."""
        if not isinstance(space_id, str) or not space_id:
            return
        at = self._clock()
        with self._lock:
            spaces = self._spaces.setdefault(principal_id, {})
            spaces.pop(space_id, None)
            spaces[space_id] = at
            while len(spaces) > self.MAX_SPACES:
                del spaces[next(iter(spaces))]

    def _counted(self, principal_id: str, at: float) -> tuple[float, float]:
        """The principal's mean of requests in flight and its highest mean, brought to `at`
        with the count it has held since they were last counted (under the lock)."""
        held = self._held.get(principal_id, 0)
        mean, peak, then = self._load.get(principal_id, (0.0, 0.0, at))
        gone = max(0.0, at - then)
        mean = held + (mean - held) * math.exp(-gone / self.MEAN_S)
        window = max(1, settings.SPOKE_MEMORY_IN_FLIGHT_WINDOW_S)
        return mean, max(mean, peak * math.exp(-gone / window))

    def _count(self, principal_id: str, at: float) -> None:
        """Bring the principal's counts to `at`, before its count of slots changes."""
        mean, peak = self._counted(principal_id, at)
        self._load[principal_id] = (mean, peak, at)

    def _weight(self, principal_id: str, at: float) -> float:
        return self._counted(principal_id, at)[1] if principal_id in self._load else 0.0

    def weights(self) -> dict[str, tuple[float, float, bool, frozenset[str]]]:
        """How heavy each principal the server served within the window is, the seconds since
        it was last served, whether it had two requests in flight at once in a process within
        the window (a client in parallel, not a sequential one), and the spaces it was answered
        in within the window (`served_in`). Its weight: the highest mean of its requests in
        flight at once (over about MEAN_S seconds), fading over the window; summed over the
        server's processes (`Neighbours`, at most a second old). Waiting for its share counts as
        in flight: holding a principal makes it no lighter. A client's requests in flight do not
        grow when another tenant slows the server down, as their cost does: one connection in a
        closed loop keeps at most one."""
        at = self._clock()
        since = at - settings.SPOKE_MEMORY_IN_FLIGHT_WINDOW_S
        with self._lock:
            found = {
                p: (
                    self._weight(p, at),
                    0.0 if p in self._held else at - t,
                    self._parallel.get(p, -math.inf) >= since,
                    self._spaces_of(p, since),
                )
                for p, t in self._seen.items()
                if t >= since or p in self._held
            }
        neighbours = self.neighbours
        if neighbours is not None:
            window = settings.SPOKE_MEMORY_IN_FLIGHT_WINDOW_S
            for p, (weight, ago, parallel, spaces) in neighbours.weights(window).items():
                mine, mine_ago, mine_parallel, mine_spaces = found.get(
                    p, (0.0, ago, False, frozenset())
                )
                found[p] = (
                    mine + weight,
                    min(ago, mine_ago),
                    parallel or mine_parallel,
                    spaces | mine_spaces,
                )
        return found

    def compared(self, principal_id: str) -> tuple[bool, bool]:
        """Whether this principal is the lighter one: a sequential client (never two requests in
        flight at once within the window) that another sharing principal outweighs more than
        LIGHTER_BY times over (`weights`; the CPU share neither holds it nor lets it go into
        debt); and whether it is the heavier one: it outweighs such a lighter one, served within
        ACTIVE_S, that much (its requests' whole time in the server counts against its share).
        Clients in parallel are never the lighter, whatever their weights: a principal held for
        its share keeps its held requests in flight, and the threads they hold, so among tenants
        alike the first one held would soon outweigh the others. Principals answered in a common
        space within the window (an app and its own agent's token) are one tenant: neither is
        the lighter or the heavier for the other."""
        weights = self.weights()
        mine, _, parallel, spaces = weights.get(principal_id, (0.0, 0.0, False, frozenset()))
        others = [
            (w, ago, par)
            for p, (w, ago, par, theirs) in weights.items()
            if p != principal_id and not spaces & theirs
        ]
        lighter = not parallel and any(w > self.LIGHTER_BY * mine for w, _, _ in others)
        heavier = any(
            not par and self.LIGHTER_BY * w < mine and ago <= self.ACTIVE_S
            for w, ago, par in others
        )
        return lighter, heavier

    def shared_on_host(self, principal_id: str) -> bool:
        """`shared`, or another process of this server served another tenant's principal within
        the window (`Neighbours`): the CPU share's rule, since the processes share the cores."""
        if self.shared(principal_id):
            return True
        neighbours = self.neighbours
        if neighbours is None:
            return False
        window = settings.SPOKE_MEMORY_IN_FLIGHT_WINDOW_S
        at = self._clock()
        with self._lock:
            spaces = self._spaces_of(principal_id, at - window)
        return neighbours.others(principal_id, window, spaces)

    def shared(self, principal_id: str) -> bool:
        """Whether the process serves another tenant too: a request of a principal answered in
        no space this one was answered in within the window (`served_in`) in flight, or one that
        took a slot within SPOKE_MEMORY_IN_FLIGHT_WINDOW_S."""
        at = self._clock()
        with self._lock:
            return self._shared(principal_id, at)

    def _shared(self, principal_id: str, at: float) -> bool:
        """Whether another tenant's principal has a request in flight here, or took a slot
        within the window (under the lock). Principals answered in a common space within the
        window (an app and its own agent's token) are one tenant; a principal not yet answered
        anywhere here is a tenant of its own."""
        since = at - settings.SPOKE_MEMORY_IN_FLIGHT_WINDOW_S
        if len(self._seen) > self.PRUNE_AT:
            self._seen = {p: t for p, t in self._seen.items() if t >= since or p in self._held}
            self._load = {p: c for p, c in self._load.items() if p in self._seen}
            self._parallel = {p: t for p, t in self._parallel.items() if p in self._seen}
            self._spaces = {p: s for p, s in self._spaces.items() if p in self._seen}
        mine = self._spaces_of(principal_id, since)

        def another(p: str) -> bool:
            return p != principal_id and not mine & self._spaces_of(p, since)

        if any(another(p) for p in self._held):
            return True
        return any(t >= since and another(p) for p, t in self._seen.items())

    def enter(self, principal_id: str) -> bool:
        """Take a slot for this principal; False (nothing taken) when it holds its limit while
        the process serves others too."""
        limit = settings.SPOKE_MEMORY_MAX_IN_FLIGHT
        at = self._clock()
        with self._lock:
            held = self._held.get(principal_id, 0)
            if 0 < limit <= held and self._shared(principal_id, at):
                return False
            self._count(principal_id, at)
            self._held[principal_id] = held + 1
            if held:
                self._parallel[principal_id] = at
            self._seen[principal_id] = at
        if self.neighbours is not None and settings.SPOKE_MEMORY_SHARED_CPU_SHARE > 0:
            self.neighbours.publish(self._seen_ago)
        return True

    def leave(self, principal_id: str) -> None:
        at = self._clock()
        with self._lock:
            self._count(principal_id, at)
            held = self._held.get(principal_id, 0) - 1
            if held > 0:
                self._held[principal_id] = held
            else:
                self._held.pop(principal_id, None)

    def park(self, principal_id: str, wait: float) -> float:
        """Hold a refused request of a principal over its rate or byte budget for
        SPOKE_MEMORY_REFUSAL_DELAY_MS (at most `wait`) before its 429, in one of its slots, and in
        one of the process's SPOKE_MEMORY_MAX_IN_FLIGHT parking places (shared by every
        principal, so one thread is never parked); with either taken, not at all. Answers the
        seconds it waited. A client that does not wait for Retry-After thus sends one request per
        slot and delay instead of as fast as it is refused (docs/decisions.md "Requests in
        flight")."""
        delay = min(settings.SPOKE_MEMORY_REFUSAL_DELAY_MS / 1000, wait)
        places = settings.SPOKE_MEMORY_MAX_IN_FLIGHT
        if delay <= 0 or places <= 0:
            return 0.0
        with self._lock:
            if self._parked >= places:
                return 0.0
            self._parked += 1
        try:
            if not self.enter(principal_id):
                return 0.0
            try:
                time.sleep(delay)
                self._local.held = getattr(self._local, "held", 0.0) + delay
            finally:
                self.leave(principal_id)
        finally:
            with self._lock:
                self._parked -= 1
        return delay

    def held_s(self) -> float:
        """The seconds this thread has been held in `park`, in all."""
        return getattr(self._local, "held", 0.0)

    @contextmanager
    def slot(self, principal: Principal) -> Iterator[None]:
        """The principal's slot for the length of the block; RateLimited when it has none."""
        if not self.enter(principal.principal_id):
            raise rate_limited(1, TOO_MANY_IN_FLIGHT)
        try:
            yield
        finally:
            self.leave(principal.principal_id)


IN_FLIGHT = InFlight()

OVER_SHARE = (
    "This caller's requests took more than its share of the server's time while it serves "
    "others too: retry later."
)


class CpuShare:
    """Each principal's share of a web process's time while the server serves other principals
    too (docs/decisions.md "CPU share while shared"): a bucket per principal, in memory, filled at
    SPOKE_MEMORY_SHARED_CPU_SHARE seconds a second (at most BURST_S seconds' worth) and emptied
    by the cost of each of its answered requests (its thread's CPU time, measured in
    `WireView.dispatch`; its whole time in the server, against SPOKE_MEMORY_HEAVIER_SHARE,
    when it is the heavier one). While
    the server is shared (`InFlight.shared_on_host`: the in-flight limit's rule, over every
    process of the server on this host), a principal whose bucket is in debt waits for it before
    its next request (`wait`, `pace`), unless it is the lighter one (`InFlight.compared`: a
    sequential client beside a principal with more than twice its requests in flight); alone, or
    the lighter, it is never held and carries no debt. 0 turns it off."""

    BURST_S = 1.0  # the bucket holds one second's share: a burst of that much runs at once
    PRUNE_AT = 64  # buckets remembered before the full ones are dropped

    def __init__(self, in_flight: InFlight, clock: Callable[[], float] = time.monotonic) -> None:
        self._in_flight = in_flight
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}  # principal → (credit s, when)

    def _credit(self, principal_id: str, at: float, share: float) -> float:
        """The principal's credit now, refilled since it was last counted (under the lock)."""
        full = share * self.BURST_S
        credit, then = self._buckets.get(principal_id, (full, at))
        return min(full, credit + (at - then) * share)

    def wait(self, principal_id: str) -> float:
        """The seconds this principal's next request must wait for its share: 0 when it is in
        credit, when the server serves it alone, when it is the lighter one, or with the share
        off."""
        share = settings.SPOKE_MEMORY_SHARED_CPU_SHARE
        if share <= 0:
            return 0.0
        at = self._clock()
        with self._lock:
            credit = self._credit(principal_id, at, share)
        if credit >= 0 or not self._in_flight.shared_on_host(principal_id):
            return 0.0
        if self._in_flight.compared(principal_id)[0]:  # the lighter one
            return 0.0
        return -credit / share

    def charge(self, principal_id: str, cpu: float, wall: float = 0.0) -> None:
        """Take an answered request's cost from the principal's bucket: its thread's CPU time
        (seconds), or, when it is the heavier one (`InFlight.compared`), its time in the server
        (`metered`) scaled to its own smaller share (`heavier_factor`; its time beyond its CPU
        puts it at most one second's share in debt, so a principal that just became the heavier
        is paced, not refused for long). A principal served alone, or the lighter one, spends
        from it but never goes into debt."""
        share = settings.SPOKE_MEMORY_SHARED_CPU_SHARE
        if share <= 0:
            return
        lighter = heavier = False
        shared = self._in_flight.shared_on_host(principal_id)
        if shared:
            lighter, heavier = self._in_flight.compared(principal_id)
        cost = max(cpu, wall) * heavier_factor(share) if heavier else cpu
        floor = None if shared and not lighter else 0.0
        at = self._clock()
        with self._lock:
            before = self._credit(principal_id, at, share)
            credit = before - cost
            if heavier:  # its time beyond its CPU puts it at most BURST_S of its share in debt
                credit = max(credit, min(before - cpu, -share * self.BURST_S))
            if floor is not None:
                credit = max(floor, credit)
            self._buckets[principal_id] = (credit, at)
            if len(self._buckets) > self.PRUNE_AT:
                full = share * self.BURST_S
                self._buckets = {
                    p: (c, t) for p, (c, t) in self._buckets.items() if c + (at - t) * share < full
                }

    def pace(self, principal_id: str) -> float | None:
        """Hold the principal's request for its share (`InFlight.park`: in one of its slots and
        one of the process's parking places, at most SPOKE_MEMORY_REFUSAL_DELAY_MS); answers
        None once it may go, or the seconds it should still wait when the wait was cut short
        (the request is then refused with that Retry-After)."""
        wait = self.wait(principal_id)
        if wait <= 0:
            return None
        slept = self._in_flight.park(principal_id, wait)
        return None if slept >= wait else wait - slept

    def check(self, principal_id: str) -> None:
        """`pace`, raising the 429 of a principal whose wait was cut short."""
        wait = self.pace(principal_id)
        if wait is not None:
            raise rate_limited(wait, OVER_SHARE)

    @contextmanager
    def metered(self) -> Iterator[Callable[[], tuple[float, float]]]:
        """The block's cost so far, as a function, for `charge`: its thread's CPU time, and its
        time in the server (its wall time, less any time it was held for its share), in seconds
        (0 with the share off). A listing's cost is mostly its SQL, PostgreSQL's CPU, which its
        thread's CPU time leaves out; but the wall time grows with every other taker of the
        cores, a light principal's slowed by a heavy one too, so it counts only against the
        heavier one (docs/reliability.md, finding 8)."""
        if settings.SPOKE_MEMORY_SHARED_CPU_SHARE <= 0:
            yield lambda: (0.0, 0.0)
            return
        in_flight = self._in_flight
        cpu, wall, held = time.thread_time(), time.perf_counter(), in_flight.held_s()
        yield lambda: (
            time.thread_time() - cpu,
            max(0.0, time.perf_counter() - wall - (in_flight.held_s() - held)),
        )


def heavier_factor(share: float) -> float:
    """How many times its time in the server a request of the heavier principal costs its
    bucket, which fills at the common `share`: so that it gets SPOKE_MEMORY_HEAVIER_SHARE
    seconds of the server's time a second while it yields (1: the common share, when that
    setting is not below it)."""
    heavier = settings.SPOKE_MEMORY_HEAVIER_SHARE
    return share / heavier if 0 < heavier < share else 1.0


CPU_SHARE = CpuShare(IN_FLIGHT)


def refuse(
    principal: Principal,
    wait: float,
    message: str = "Too many requests: slow down and retry later.",
) -> RateLimited:
    """The 429 of a principal over its request rate or byte budget, once `InFlight.park` has
    held it; its Retry-After counts from the answer."""
    slept = IN_FLIGHT.park(principal.principal_id, wait)
    return rate_limited(max(0.0, wait - slept), message)


def declared_length(request) -> int:
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0  # Django reads no body it cannot size


def drain(stream, length: int, chunk: int = 65_536) -> None:
    """Read and discard a request body unread so far, so the keep-alive connection can carry
    the client's next request (gunicorn closes one whose body was not read to its end, and a
    client still sending it sees a broken pipe instead of the answer)."""
    left = length
    while left > 0:
        try:
            got = stream.read(min(chunk, left))
        except Exception:  # noqa: BLE001 - a body shorter than declared: the answer stands,
            return  # the server closes the connection
        if not got:
            return
        left -= len(got)


def read_body(request) -> dict:
    """Gate 3 at the edge: size, then a JSON object (its storability is judged by `admit`)."""
    limit = settings.SPOKE_MEMORY_LIMITS["max_request_bytes"]
    declared = request.META.get("CONTENT_LENGTH")
    too_large = PayloadTooLarge(
        "The request body is larger than limits.max_request_bytes.",
        limit=limit,
    )
    try:
        if declared and int(declared) > limit:
            raise too_large
    except ValueError:
        pass
    raw = request.body
    if len(raw) > limit:
        raise too_large
    malformed = BadRequest("The request body must be a JSON object.", reason="malformed_json")
    try:
        text = raw.decode("utf-8")
        body = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        # Nested hundreds of levels deep, past what the parser follows from this point of the
        # stack: refused for its depth, as a body that did parse and nests too deep is (the
        # reason must not depend on how deep the server's own stack happened to be)
        limit = settings.SPOKE_MEMORY_LIMITS["max_json_depth"]
        raise schema_error("/", DEPTH_MESSAGE.format(limit=limit))
    except (UnicodeDecodeError, ValueError):
        raise malformed
    if not isinstance(body, dict):
        raise malformed
    return body


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


class BearerToken(BaseAuthentication):
    """Gate 2 (SPEC §1.2) as DRF authentication: the bearer token's principal becomes
    `request.user`. A missing or bad token raises the wire's 401, never DRF's own."""

    def authenticate(self, request) -> tuple[Principal, tuple[str, ...] | None]:
        return auth.principal_for_header(request.META.get("HTTP_AUTHORIZATION")), None

    def authenticate_header(self, request) -> str:
        return "Bearer"


class BearerTokenAndSession(BearerToken):
    """Gate 2 for ops: the token, then `Spoke-Session` (SPEC §1.3). `request.auth` is the
    negotiated capabilities: the session's, or the core flag when no session is named."""

    def authenticate(self, request) -> tuple[Principal, tuple[str, ...] | None]:
        principal, _ = super().authenticate(request)
        session_id = request.META.get("HTTP_SPOKE_SESSION")
        if session_id is None:
            return principal, auth.default_negotiated()
        return principal, tuple(auth.session_for(principal, session_id).negotiated_capabilities)


class AnswerAsJson(BaseContentNegotiation):
    """The wire answers JSON whatever the client's Accept header says (DRF's default would answer
    406 to `Accept: text/html`, which no gate of the SPEC does)."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class WireView(APIView):
    """Base for the wire endpoints, on DRF's own hooks in the SPEC §1.4 gate order: `initial`
    checks the route and the method, then DRF's `initial` runs authentication (the classes above)
    and the throttle, then the byte budget, the principal's share of the process's time
    (`CpuShare`, charged by `dispatch`) and its slot among its requests in flight (`InFlight`,
    released by `dispatch`); the handler reads the body; `handle_exception` turns every error
    into the wire's envelope. Permissions are not DRF's: grants are judged per op by admission."""

    http_method_names = ["post"]  # DRF's `Allow: POST` on every answer, the 405s included
    holding: str | None = None  # the principal whose in-flight slot this request holds
    authentication_classes = [BearerToken]
    permission_classes: list = []
    throttle_classes = [PrincipalThrottle]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = AnswerAsJson

    def check_route(self, **kwargs) -> None:
        """Gate 1's route check, for views whose URL carries more than a path."""

    def initial(self, request, *args, **kwargs) -> None:
        self.check_route(**kwargs)
        if request.method != "POST":
            raise MethodNotAllowed("Only POST is allowed here.")
        super().initial(request, *args, **kwargs)
        # The byte budget, from the declared length, before anything reads the body (a body
        # longer than max_request_bytes never gets here: spokememory/body_limits.py).
        size = declared_length(request)
        wait = charge_bytes(request.user, size)
        if wait is not None:
            drain(request._request.META["wsgi.input"], size)
            raise refuse(request.user, wait, OVER_BUDGET)
        # Then its share of the process's time while the server serves others too: a principal
        # in debt waits for it, at most the refusal delay, else 429 (`CpuShare`).
        wait = CPU_SHARE.pace(request.user.principal_id)
        if wait is not None:
            drain(request._request.META["wsgi.input"], size)
            raise rate_limited(wait, OVER_SHARE)
        # Then a slot among the principal's requests in flight, held until the answer
        # (`dispatch`): past its limit, refused at once, before the body is read.
        if not IN_FLIGHT.enter(request.user.principal_id):
            drain(request._request.META["wsgi.input"], size)
            raise rate_limited(1, TOO_MANY_IN_FLIGHT)
        self.holding = request.user.principal_id

    def dispatch(self, request, *args, **kwargs):
        # DRF's dispatch, and the in-flight slot `initial` took released whatever happens: a
        # slot never given back would refuse the principal in this process until it restarts.
        # The request's cost is charged to its principal's share (`CpuShare`).
        self.holding = None
        with CPU_SHARE.metered() as cost:
            try:
                return super().dispatch(request, *args, **kwargs)
            finally:
                if self.holding is not None:
                    IN_FLIGHT.leave(self.holding)
                    CPU_SHARE.charge(self.holding, *cost())

    def throttled(self, request, wait) -> NoReturn:
        # Read and discard the unparsed body first, as the byte budget's refusal does: answered
        # with the body unread, gunicorn closes the connection under a client still sending it,
        # which then sees a broken connection instead of the 429 and its Retry-After. The body
        # is bounded: one over max_request_bytes never gets here (spokememory/body_limits.py).
        drain(request._request.META["wsgi.input"], declared_length(request))
        raise refuse(request.user, wait or 1.0)

    def refused_body(self, request) -> None:
        charge_refused(request.user, declared_length(request))

    def handle_exception(self, exc):
        if isinstance(exc, WireError):
            return error_response(exc)
        if is_outage(exc):
            return outage(exc)
        return internal_error(exc)


class OpView(WireView):
    authentication_classes = [BearerTokenAndSession]

    def check_route(self, **kwargs) -> None:
        op = kwargs["op"]
        if op not in catalog().ops:
            raise UnknownOp("No such op.", op=op[:100])

    def post(self, request, op: str):
        # 3. body
        negotiated = request.auth
        try:
            body = read_body(request._request)
            # 3 (storability) and 4-6 (capability, schema, cognition grammar): one admission path
            admit(op, body, negotiated)
        except (BadRequest, PayloadTooLarge):
            self.refused_body(request)
            raise
        handler = HANDLERS.get(op)
        if handler is None:  # in the contract, not yet served by this build
            raise UnknownOp("This op is not served by this provider build.", op=op)
        ctx = OpContext(principal=request.user, op=op, negotiated=negotiated, at=now())
        answer = handler(ctx, body)
        IN_FLIGHT.served_in(request.user.principal_id, body.get("space_id"))
        return json_response(answer)


def _validated(request, endpoint: str) -> dict:
    body = read_body(request._request)
    check_storable(body)
    if isinstance(body.get("extensions"), dict):  # a session's extensions are stored
        depth = settings.SPOKE_MEMORY_LIMITS["max_json_depth"]
        check_value_depth(body["extensions"], "/extensions", depth)
    errors = schema_errors(catalog().validator(catalog().endpoints[endpoint]["request"]), body)
    if errors:
        raise BadRequest(
            "The request does not match the schema.",
            reason="schema",
            errors=errors,
        )
    return body


class ConnectView(WireView):
    def post(self, request):
        try:
            body = _validated(request, "connect")
        except (BadRequest, PayloadTooLarge):
            self.refused_body(request)
            raise
        session = auth.open_session(request.user, body["capabilities"], body.get("extensions", {}))
        return json_response({"session": session.to_wire()})


class DisconnectView(WireView):
    def post(self, request):
        session_id = request.META.get("HTTP_SPOKE_SESSION")
        if not session_id:
            raise auth.session_invalid()
        session = auth.session_for(request.user, session_id)
        session.closed_at = now()
        session.save(update_fields=["closed_at"])
        return json_response({"closed": True, "session_id": session.session_id})


# Which limit a 429's message names (memory/observability/metrics.py `refused`).
_LIMIT_OF = {OVER_BUDGET: "bytes", OVER_SHARE: "cpu_share", TOO_MANY_IN_FLIGHT: "in_flight"}
