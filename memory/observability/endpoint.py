"""`GET /metrics`: the Prometheus exposition of every web process (multiprocess mode when
PROMETHEUS_MULTIPROC_DIR is set, as under gunicorn) plus the database gauges (`collect.py`).

Who may scrape (docs/observability.md):
- a request bearing `Authorization: Bearer <SPOKE_MEMORY_METRICS_TOKEN>` (when that is set);
- else a request whose peer address is in SPOKE_MEMORY_METRICS_ALLOW_FROM (default: loopback
  only) and that carries no forwarding header (X-Forwarded-For, Forwarded, X-Real-IP or the
  trusted proxy header): a reverse proxy on the same host would otherwise make every outside
  caller look like loopback.
Anyone else gets the same 404 as a path that does not exist."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
from collections.abc import Iterable

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Metric,
    generate_latest,
    multiprocess,
)

from memory.observability.collect import DatabaseCollector

FORWARDING = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP")


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()


def allowed(request: HttpRequest) -> bool:
    token = settings.SPOKE_MEMORY_METRICS_TOKEN
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if token and header.startswith("Bearer "):
        # Compared as digests, in constant time (the header's length tells nothing either).
        return hmac.compare_digest(_digest(header[len("Bearer ") :]), _digest(token))
    forwarded = FORWARDING + (
        (settings.SPOKE_MEMORY_TRUSTED_PROXY_HEADER,)
        if settings.SPOKE_MEMORY_TRUSTED_PROXY_HEADER
        else ()
    )
    if any(name in request.META for name in forwarded):
        return False
    try:
        peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(peer in net for net in _networks())


def _networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(n, strict=False) for n in settings.SPOKE_MEMORY_METRICS_ALLOW_FROM]


def registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        reg = CollectorRegistry()
        multiprocess.MultiProcessCollector(reg)
    else:
        reg = CollectorRegistry(auto_describe=False)
        reg.register(_Process())
    reg.register(DatabaseCollector())
    return reg


class _Process:
    """This process's own registry (single-process: runserver, the test client)."""

    def collect(self) -> Iterable[Metric]:
        return REGISTRY.collect()


def metrics(request: HttpRequest) -> HttpResponse:
    if request.method != "GET" or not allowed(request):
        raise Http404
    body = generate_latest(registry())
    response = HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response
