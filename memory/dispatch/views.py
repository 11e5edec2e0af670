"""The wire's op and session views. `OpView` runs the edge's gates of SPEC §1.4 in order (route,
method, token, session, throttle, body), then `memory.admission.admit`, then the op's handler;
every error leaves through `responses.error_response`. Discovery (manifest, OpenAPI, docs) is in
`discovery.py`, health in `health.py`."""

from __future__ import annotations

import json
import logging
import time
from typing import NoReturn

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from memory.admission import admit, check_storable, check_value_depth
from memory.dispatch import auth
from memory.dispatch.responses import error_response, internal_error, json_response, outage
from memory.models import Principal
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
        principal = getattr(view, "principal", None)
        return None if principal is None else f"throttle:principal:{principal.principal_id}"

    def allow_request(self, request, view) -> bool:
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        own = getattr(view.principal, "rate", None)
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
    """`charge_bytes`, raising the 429 of a principal over its budget."""
    wait = charge_bytes(principal, size)
    if wait is not None:
        raise rate_limited(wait, OVER_BUDGET)


def charge_refused(principal: Principal, size: int) -> None:
    """A body refused as invalid (400 invalid_input, 413) costs the budget
    SPOKE_MEMORY_REFUSED_BODY_WEIGHT times its size in all: an invalid body is what costs the
    server most to judge and a well-behaved client least to avoid."""
    extra = (settings.SPOKE_MEMORY_REFUSED_BODY_WEIGHT - 1) * size
    if extra > 0:
        charge_bytes(principal, extra)


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
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise malformed
    if not isinstance(body, dict):
        raise malformed
    return body


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


class WireView(APIView):
    """Base for the wire endpoints: DRF's negotiation, parsing and auth are not used (the gates
    must run in the SPEC's order); DRF contributes throttling and the view plumbing."""

    authentication_classes: list = []
    permission_classes: list = []
    throttle_classes = [PrincipalThrottle]
    principal: Principal | None = None

    def initial(self, request, *args, **kwargs) -> None:
        pass

    def throttled(self, request, wait) -> NoReturn:
        raise rate_limited(wait)

    def authenticate(self, request) -> Principal:
        principal = auth.principal_for_header(request.META.get("HTTP_AUTHORIZATION"))
        self.principal = principal
        self.check_throttles(request)
        # The byte budget, from the declared length, before anything reads the body (a body
        # longer than max_request_bytes never gets here: spokememory/body_limits.py).
        size = declared_length(request)
        try:
            check_byte_budget(principal, size)
        except RateLimited:
            drain(request._request.META["wsgi.input"], size)
            raise
        return principal

    def refused_body(self, request, principal: Principal) -> None:
        charge_refused(principal, declared_length(request))

    def handle_exception(self, exc):
        if isinstance(exc, WireError):
            return error_response(exc)
        if is_outage(exc):
            return outage(exc)
        return internal_error(exc)

    def http_method_not_allowed(self, request, *args, **kwargs):
        raise MethodNotAllowed("Only POST is allowed here.")

    options = http_method_not_allowed

    def finalize_response(self, request, response, *args, **kwargs):
        return response


class OpView(WireView):
    def dispatch(self, request, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        request = self.initialize_request(request, *args, **kwargs)
        self.request = request
        try:
            return self.run(request, kwargs["op"])
        except Exception as exc:  # noqa: BLE001 - the one place errors become envelopes
            return self.handle_exception(exc)

    def run(self, request, op: str):
        # 1. route, method
        if op not in catalog().ops:
            raise UnknownOp("No such op.", op=op[:100])
        if request.method != "POST":
            raise MethodNotAllowed("Only POST is allowed here.")
        # 2. authentication, session
        principal = self.authenticate(request)
        session_id = request.META.get("HTTP_SPOKE_SESSION")
        if session_id is None:
            negotiated = auth.default_negotiated()
        else:
            negotiated = tuple(auth.session_for(principal, session_id).negotiated_capabilities)
        # 3. body
        try:
            body = read_body(request._request)
            # 3 (storability) and 4-6 (capability, schema, cognition grammar): one admission path
            admit(op, body, negotiated)
        except (BadRequest, PayloadTooLarge):
            self.refused_body(request, principal)
            raise
        handler = HANDLERS.get(op)
        if handler is None:  # in the contract, not yet served by this build
            raise UnknownOp("This op is not served by this provider build.", op=op)
        ctx = OpContext(principal=principal, op=op, negotiated=negotiated, at=now())
        return json_response(handler(ctx, body))


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
        principal = self.authenticate(request)
        try:
            body = _validated(request, "connect")
        except (BadRequest, PayloadTooLarge):
            self.refused_body(request, principal)
            raise
        session = auth.open_session(principal, body["capabilities"], body.get("extensions", {}))
        return json_response({"session": session.to_wire()})


class DisconnectView(WireView):
    def post(self, request):
        principal = self.authenticate(request)
        session_id = request.META.get("HTTP_SPOKE_SESSION")
        if not session_id:
            raise auth.session_invalid()
        session = auth.session_for(principal, session_id)
        session.closed_at = now()
        session.save(update_fields=["closed_at"])
        return json_response({"closed": True, "session_id": session.session_id})
