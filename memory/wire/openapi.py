"""The OpenAPI 3.1 document, generated from the same schemas the dispatch validates with."""

from functools import lru_cache
from typing import Any

from django.conf import settings

from memory.wire.validation import URN, catalog


def _rewrite(node: Any) -> Any:
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k in ("$id", "$schema"):
                continue
            if k == "$ref" and isinstance(v, str) and v.startswith(URN):
                out[k] = "#/components/schemas/" + v[len(URN) :]
            else:
                out[k] = _rewrite(v)
        return out
    if isinstance(node, list):
        return [_rewrite(v) for v in node]
    return node


ERROR = {"$ref": "#/components/schemas/ErrorEnvelope"}


def _json(schema: dict) -> dict:
    return {"content": {"application/json": {"schema": schema}}}


def _errors() -> dict:
    return {
        "default": {"description": "An error envelope (SPEC §1.5)", **_json(ERROR)},
    }


@lru_cache(maxsize=1)
def document() -> dict:
    cat = catalog()
    schemas = {name: _rewrite(schema) for name, schema in cat.components.items()}
    paths: dict[str, dict] = {}
    for name in sorted(cat.ops):
        spec = cat.ops[name]
        req_name, res_name = f"{name}.request", f"{name}.response"
        schemas[req_name] = _rewrite(spec.request)
        schemas[res_name] = _rewrite(spec.response)
        paths[f"/v1/ops/{name}"] = {
            "post": {
                "operationId": name,
                "summary": spec.summary,
                "x-spoke-flag": spec.flag,
                "x-spoke-mutating": spec.mutating,
                "tags": [spec.flag],
                "parameters": [
                    {
                        "name": "Spoke-Session",
                        "in": "header",
                        "required": False,
                        "schema": {"type": "string"},
                        "description": "Session from /v1/connect; without it the negotiated set is ['spoke-memory'].",
                    }
                ],
                "requestBody": {
                    "required": True,
                    **_json({"$ref": f"#/components/schemas/{req_name}"}),
                },
                "responses": {
                    "200": {
                        "description": "Success payload",
                        **_json({"$ref": f"#/components/schemas/{res_name}"}),
                    },
                    **_errors(),
                },
            }
        }
    for endpoint in ("connect", "disconnect"):
        doc = cat.endpoints[endpoint]
        paths[f"/v1/{endpoint}"] = {
            "post": {
                "operationId": endpoint,
                "summary": doc.get("summary", endpoint),
                "requestBody": {
                    "required": endpoint == "connect",
                    **_json(_rewrite(doc["request"])),
                },
                "responses": {
                    "200": {"description": "Success", **_json(_rewrite(doc["response"]))},
                    **_errors(),
                },
            }
        }
    paths["/v1/manifest"] = {
        "get": {
            "operationId": "manifest",
            "summary": "The host capability manifest (no authentication).",
            "security": [],
            "responses": {
                "200": {
                    "description": "Manifest",
                    **_json(_rewrite(cat.endpoints["manifest"]["response"])),
                }
            },
        }
    }
    health = {
        "type": "object",
        "properties": {"status": {"type": "string"}},
        "required": ["status"],
    }
    for probe in ("healthz", "readyz"):
        paths[f"/{probe}"] = {
            "get": {
                "operationId": probe,
                "summary": "Liveness"
                if probe == "healthz"
                else "Readiness: database and broker reachable",
                "security": [],
                "responses": {
                    "200": {"description": "ok", **_json(health)},
                    "503": {"description": "not ready", **_json(health)},
                },
            }
        }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "spoke-memory",
            "version": "1",
            "description": "The spoke-memory wire family over HTTP. Provider: "
            + settings.SPOKE_MEMORY_PROVIDER_ID,
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
