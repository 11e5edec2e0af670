"""The wire's op and session views. `OpView` runs the edge's gates of docs/protocol.md#dispatch in order (route,
method, token, session, then the limiter's admission, body), then `memory.admission.admit`, then
the op's handler; every error leaves through `responses.error_response`. Discovery (manifest,
OpenAPI, docs) is in `discovery.py`, health in `health.py`."""

from __future__ import annotations

import json
import logging
from typing import IO, Any, NoReturn

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from rest_framework.authentication import BaseAuthentication
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from memory.admission import (
    DEPTH_MESSAGE,
    admit,
    check_storable,
    check_value_depth,
    schema_error,
)
from memory.context import OpContext
from memory.dispatch import auth
from memory.dispatch.responses import error_response, internal_error, json_response, outage
from memory.limits import LIMITER, Hold
from memory.models import Principal
from memory.ops.base import HANDLERS, op_cost
from memory.outage import is_outage
from memory.timeutil import now
from memory.wire.errors import (
    BadRequest,
    MethodNotAllowed,
    PayloadTooLarge,
    UnknownOp,
    WireError,
)
from memory.wire.validation import catalog, schema_errors

log = logging.getLogger("memory.dispatch")


def declared_length(request: HttpRequest | Request) -> int:
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0  # Django reads no body it cannot size


def drain(stream: IO[bytes], length: int, chunk: int = 65_536) -> None:
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


def read_body(request: HttpRequest) -> dict[str, Any]:
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


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


class BearerToken(BaseAuthentication):
    """Gate 2 (docs/protocol.md#authentication) as DRF authentication: the bearer token's principal becomes
    `request.user`. A missing or bad token raises the wire's 401, never DRF's own."""

    def authenticate(self, request: Request) -> tuple[Principal, tuple[str, ...] | None]:
        return auth.principal_for_header(request.META.get("HTTP_AUTHORIZATION")), None

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"


class BearerTokenAndSession(BearerToken):
    """Gate 2 for ops: the token, then `Spoke-Session` (docs/protocol.md#sessions). `request.auth` is the
    negotiated capabilities: the session's, or the core flag when no session is named."""

    def authenticate(self, request: Request) -> tuple[Principal, tuple[str, ...] | None]:
        principal, _ = super().authenticate(request)
        session_id = request.META.get("HTTP_SPOKE_SESSION")
        if session_id is None:
            return principal, auth.default_negotiated()
        return principal, tuple(auth.session_for(principal, session_id).negotiated_capabilities)


class AnswerAsJson(BaseContentNegotiation):
    """The wire answers JSON whatever the client's Accept header says (DRF's default would answer
    406 to `Accept: text/html`, which no gate of the protocol does)."""

    def select_parser(self, request: Request, parsers: Any) -> BaseParser | None:
        return parsers[0] if parsers else None

    def select_renderer(
        self, request: Request, renderers: Any, format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        return renderers[0], renderers[0].media_type


def principal_of(request: Request) -> Principal:
    """The bearer token's principal: `request.user` as the authentication classes set it."""
    principal = request.user
    assert isinstance(principal, Principal)
    return principal


def negotiated_of(request: Request) -> tuple[str, ...]:
    """The capabilities the request is judged with: `request.auth` as `BearerTokenAndSession`
    sets it (the session's, or the core flag)."""
    negotiated = request.auth
    assert isinstance(negotiated, tuple)
    return negotiated


class WireView(APIView):
    """Base for the wire endpoints, on DRF's own hooks in the docs/protocol.md#dispatch gate order: `initial`
    checks the route and the method, then DRF's `initial` runs authentication (the classes
    above), then the limiter admits the request (memory/limits.py: a unit of its principal's and
    its space's rates, its declared bytes, a place in flight, held until `dispatch` ends), all
    before the body is read; the handler reads the body; `handle_exception` turns every error
    into the wire's envelope. Permissions are not DRF's: grants are judged per op by
    admission."""

    http_method_names = ["post"]  # DRF's `Allow: POST` on every answer, the 405s included
    hold: Hold | None = None  # the request's places in flight (memory/limits.py)
    authentication_classes = [BearerToken]
    permission_classes: list[Any] = []
    throttle_classes: list[Any] = []
    renderer_classes = [JSONRenderer]
    content_negotiation_class = AnswerAsJson

    def check_route(self, **kwargs: Any) -> None:
        """Gate 1's route check, for views whose URL carries more than a path."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        self.check_route(**kwargs)
        if request.method != "POST":
            raise MethodNotAllowed("Only POST is allowed here.")
        super().initial(request, *args, **kwargs)
        # A body longer than max_request_bytes never gets here (spokememory/body_limits.py).
        size = declared_length(request)
        try:
            self.hold = LIMITER.admit(principal_of(request), size)
        except WireError:
            # Read and discard the unread body first: answered with it unread, gunicorn closes
            # the connection under a client still sending it, which then sees a broken pipe
            # instead of the 429 and its Retry-After.
            drain(request._request.META["wsgi.input"], size)
            raise

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        # DRF's dispatch, and the places in flight `initial` took given back whatever happens.
        self.hold = None
        try:
            return super().dispatch(request, *args, **kwargs)
        finally:
            if self.hold is not None:
                LIMITER.leave(self.hold)

    def refused_body(self, request: Request) -> None:
        LIMITER.refused_body(principal_of(request), declared_length(request))

    # DRF's stubs say a Response; the wire's envelope is a plain HttpResponse, which DRF's
    # dispatch finalizes alike.
    def handle_exception(self, exc: Exception) -> HttpResponse:  # type: ignore[override]
        if isinstance(exc, WireError):
            return error_response(exc)
        if is_outage(exc):
            return outage(exc)
        return internal_error(exc)


class OpView(WireView):
    authentication_classes = [BearerTokenAndSession]

    def check_route(self, **kwargs: Any) -> None:
        op = kwargs["op"]
        if op not in catalog().ops:
            raise UnknownOp("No such op.", op=op[:100])

    def post(self, request: Request, op: str) -> HttpResponse:
        # 3. body
        negotiated = negotiated_of(request)
        principal = principal_of(request)
        try:
            body = read_body(request._request)
            # the rest of the op's declared cost (memory.ops.base.op_cost), before validation
            LIMITER.charge(principal, op_cost(op, body, declared_length(request)) - 1)
            # 3 (storability) and 4-6 (capability, schema, cognition grammar): one admission path
            admit(op, body, negotiated)
        except (BadRequest, PayloadTooLarge):
            self.refused_body(request)
            raise
        handler = HANDLERS.get(op)
        if handler is None:  # in the contract, not yet served by this build
            raise UnknownOp("This op is not served by this provider build.", op=op)
        ctx = OpContext(principal=principal, op=op, negotiated=negotiated, at=now())
        answer = handler(ctx, body)
        return json_response(answer)


def _validated(request: Request, endpoint: str) -> dict[str, Any]:
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
    def post(self, request: Request) -> HttpResponse:
        try:
            body = _validated(request, "connect")
        except (BadRequest, PayloadTooLarge):
            self.refused_body(request)
            raise
        session = auth.open_session(
            principal_of(request), body["capabilities"], body.get("extensions", {})
        )
        return json_response({"session": session.to_wire()})


class DisconnectView(WireView):
    def post(self, request: Request) -> HttpResponse:
        session_id = request.META.get("HTTP_SPOKE_SESSION")
        if not session_id:
            raise auth.session_invalid()
        session = auth.session_for(principal_of(request), session_id)
        session.closed_at = now()
        session.save(update_fields=["closed_at"])
        return json_response({"closed": True, "session_id": session.session_id})
