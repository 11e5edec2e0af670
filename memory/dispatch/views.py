"""HTTP views. `OpView` runs the gates of SPEC §1.4 in order, then the op's handler; every error
leaves through `error_response`, the single mapping of WireError to the envelope."""

from __future__ import annotations

import json
import logging
from functools import wraps

from django.conf import settings
from django.db import connection
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView
from ulid import ULID

from memory.admission import admit, check_storable
from memory.dispatch import auth
from memory.ops.base import HANDLERS, OpContext
from memory.outage import is_outage, unavailable
from memory.timeutil import now
from memory.wire.errors import WireError
from memory.wire.validation import catalog, schema_errors

log = logging.getLogger("memory.dispatch")


def json_response(payload: dict, status: int = 200, headers: dict | None = None) -> HttpResponse:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    response = HttpResponse(body.encode("utf-8"), status=status, content_type="application/json")
    for k, v in (headers or {}).items():
        response[k] = v
    return response


def error_response(err: WireError) -> HttpResponse:
    return json_response(err.envelope(), status=err.status, headers=err.headers)


def internal_error(exc: BaseException) -> HttpResponse:
    request_id = f"req_{ULID()}"
    # The request id ties the log line to the client's report; the exception type and trace go
    # to the log, never request content or stored memory content.
    log.error("internal error %s: %s", request_id, type(exc).__name__, exc_info=exc)
    err = WireError("internal_error", "An internal error occurred.", request_id=request_id)
    return error_response(err)


def outage(exc: BaseException) -> HttpResponse:
    """The database went away under the request (docs/decisions.md "Database unavailable").
    Any transaction was already rolled back by its atomic block (or the connection dropped,
    which rolls it back on the server); Django discards the broken connection at the end of
    the request and the next one reconnects."""
    log.warning("database unavailable: %s", type(exc.__cause__ or exc).__name__)
    return error_response(unavailable())


class PrincipalThrottle(SimpleRateThrottle):
    """Per-principal request rate (DRF's cache-backed throttle, keyed on the principal)."""

    scope = "principal"

    def get_cache_key(self, request, view) -> str | None:
        principal = getattr(view, "principal", None)
        return None if principal is None else f"throttle:principal:{principal.principal_id}"


def read_body(request) -> dict:
    """Gate 3 at the edge: size, then a JSON object (its storability is judged by `admit`)."""
    limit = settings.SPOKE_MEMORY_LIMITS["max_request_bytes"]
    declared = request.META.get("CONTENT_LENGTH")
    too_large = WireError(
        "payload_too_large",
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
    malformed = WireError(
        "invalid_input", "The request body must be a JSON object.", reason="malformed_json"
    )
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
    principal = None

    def initial(self, request, *args, **kwargs) -> None:
        pass

    def throttled(self, request, wait) -> None:
        err = WireError("rate_limited", "Too many requests: slow down and retry later.")
        err.headers["Retry-After"] = str(max(1, int((wait or 1) + 0.999)))
        raise err

    def authenticate(self, request) -> None:
        self.principal = auth.principal_for_header(request.META.get("HTTP_AUTHORIZATION"))
        self.check_throttles(request)

    def handle_exception(self, exc):
        if isinstance(exc, WireError):
            return error_response(exc)
        if is_outage(exc):
            return outage(exc)
        return internal_error(exc)

    def http_method_not_allowed(self, request, *args, **kwargs):
        raise WireError("method_not_allowed", "Only POST is allowed here.")

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
            raise WireError("unknown_op", "No such op.", op=op[:100])
        if request.method != "POST":
            raise WireError("method_not_allowed", "Only POST is allowed here.")
        # 2. authentication, session
        self.authenticate(request)
        session_id = request.META.get("HTTP_SPOKE_SESSION")
        if session_id is None:
            negotiated = auth.default_negotiated()
        else:
            negotiated = tuple(auth.session_for(self.principal, session_id).negotiated_capabilities)
        # 3. body
        body = read_body(request._request)
        # 3 (storability) and 4-6 (capability, schema, cognition grammar): one admission path
        admit(op, body, negotiated)
        handler = HANDLERS.get(op)
        if handler is None:  # in the contract, not yet served by this build
            raise WireError("unknown_op", "This op is not served by this provider build.", op=op)
        ctx = OpContext(principal=self.principal, op=op, negotiated=negotiated, at=now())
        return json_response(handler(ctx, body))


def _validated(request, endpoint: str) -> dict:
    body = read_body(request._request)
    check_storable(body)
    errors = schema_errors(catalog().validator(catalog().endpoints[endpoint]["request"]), body)
    if errors:
        raise WireError(
            "invalid_input",
            "The request does not match the schema.",
            reason="schema",
            errors=errors,
        )
    return body


class ConnectView(WireView):
    def post(self, request):
        self.authenticate(request)
        body = _validated(request, "connect")
        session = auth.open_session(
            self.principal, body["capabilities"], body.get("extensions", {})
        )
        return json_response({"session": session.to_wire()})


class DisconnectView(WireView):
    def post(self, request):
        self.authenticate(request)
        session_id = request.META.get("HTTP_SPOKE_SESSION")
        if not session_id:
            raise auth.session_invalid()
        session = auth.session_for(self.principal, session_id)
        session.closed_at = now()
        session.save(update_fields=["closed_at"])
        return json_response({"closed": True, "session_id": session.session_id})


def wire_get(view):
    """A GET-only endpoint whose other methods answer the JSON 405 envelope (no CSRF: it reads)."""

    @csrf_exempt
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if request.method not in ("GET", "HEAD"):
            return error_response(WireError("method_not_allowed", "Only GET is allowed here."))
        return view(request, *args, **kwargs)

    return wrapped


def manifest_payload() -> dict:
    return {
        "manifest": {
            "schema_version": 1,
            "provider_id": settings.SPOKE_MEMORY_PROVIDER_ID,
            "protocol_version": "1",
            "role": "memory-provider",
            "capabilities": list(settings.SPOKE_MEMORY_SERVED_CAPABILITIES),
            "extensions": {},
        }
    }


@wire_get
def manifest(request):
    return json_response(manifest_payload())


@wire_get
def openapi(request):
    from memory.wire.openapi import document

    return json_response(document())


@wire_get
def api_docs(request):
    return render(request, "memory/api_docs.html", {"spec": document_for_docs()})


def document_for_docs() -> list[dict]:
    from memory.wire.openapi import document

    doc = document()
    out = []
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            ok = (
                operation.get("responses", {})
                .get("200", {})
                .get("content", {})
                .get("application/json", {})
            )
            out.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "summary": operation.get("summary", ""),
                    "flag": operation.get("x-spoke-flag", ""),
                    "request": json.dumps(body.get("schema"), indent=2) if body else "",
                    "response": json.dumps(ok.get("schema"), indent=2) if ok else "",
                }
            )
    return out


@wire_get
def healthz(request):
    return json_response({"status": "ok"})


@wire_get
def readyz(request):
    problems = []
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # noqa: BLE001
        problems.append("database")
    try:
        from spokememory.celery import app

        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception:  # noqa: BLE001
        problems.append("broker")
    if problems:
        return json_response({"status": "unavailable", "unavailable": problems}, status=503)
    return json_response({"status": "ok"})
