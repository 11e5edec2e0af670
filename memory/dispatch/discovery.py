"""Discovery: the provider manifest, the OpenAPI document and its human-readable page."""

from __future__ import annotations

import json

from django.conf import settings
from django.shortcuts import render

from memory.dispatch.responses import json_response, wire_get


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
