"""Discovery: the provider manifest, the OpenAPI document and its human-readable page."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory.dispatch.responses import json_response, wire_get


def manifest_payload() -> dict[str, Any]:
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
def manifest(request: HttpRequest) -> HttpResponse:
    return json_response(manifest_payload())


@wire_get
def openapi(request: HttpRequest) -> HttpResponse:
    from memory.wire.openapi import document

    return json_response(document())


@wire_get
def api_docs(request: HttpRequest) -> HttpResponse:
    """Swagger UI over /v1/openapi.json, its files served from here (static/swagger-ui)."""
    return render(request, "memory/api_docs.html")


DATABASES = {"sqlite": "SQLite (the embedded default)", "postgresql": "PostgreSQL"}
BROKERS = {
    "filesystem": "the filesystem broker (the embedded default)",
    "redis": "Redis",
    "rediss": "Redis (TLS)",
    "amqp": "RabbitMQ",
    "amqps": "RabbitMQ (TLS)",
}


def server_facts() -> dict[str, Any]:
    """What the landing page says about this server: kinds only, never addresses or names (the
    page is public)."""
    vendor = connection.vendor
    scheme = urlsplit(settings.CELERY_BROKER_URL).scheme or settings.CELERY_BROKER_URL
    return {
        "provider_id": settings.SPOKE_MEMORY_PROVIDER_ID,
        "engine": settings.SPOKE_MEMORY_ENGINE,
        "database": DATABASES.get(vendor, vendor),
        "broker": BROKERS.get(scheme, scheme),
        "capabilities": list(settings.SPOKE_MEMORY_SERVED_CAPABILITIES),
    }


@wire_get
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "memory/home.html", server_facts())
