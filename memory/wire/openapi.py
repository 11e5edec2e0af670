"""The OpenAPI 3.1 document, generated from the same schemas the dispatch validates with: each
op's answer, and its error answers by status with the codes each status may carry (its schema's
`errors` and the codes of every op, from memory/wire/schemas/errors.json), each code's own
schema among the components (`RevisionConflictError`: the envelope with its code and details)."""

from functools import lru_cache
from typing import Any

from django.conf import settings

from memory.wire.validation import URN, Catalog, catalog


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


def _titled(schemas: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every component titled by its own (unique) key, so client generators name one model per
    component: a component that only aliases another (`Receipt`, the mutating ops' answers, all
    `ReceiptResponse`) becomes a copy of its target under its own title, and nested inline
    objects lose any title they carried (generators name them after their parent)."""
    out: dict[str, dict[str, Any]] = {}
    prefix = "#/components/schemas/"
    for name, schema in schemas.items():
        while set(schema) - {"title", "description"} == {"$ref"}:
            schema = {**schemas[schema["$ref"][len(prefix) :]], **_doc(schema)}
        out[name] = {"title": name, **{k: v for k, v in schema.items() if k != "title"}}
    return out


def _doc(schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": schema["description"]} if "description" in schema else {}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _errors() -> dict[str, Any]:
    return {
        "default": {"description": "An error envelope (docs/protocol.md#errors)", **_json(ERROR)},
    }


def error_schema_name(entry: dict[str, Any]) -> str:
    return f"{entry['name']}Error"


def _error_schemas(cat: Catalog) -> dict[str, dict[str, Any]]:
    """One component per error code (memory/wire/schemas/errors.json): the envelope with the
    code fixed and its details schema."""
    out = {}
    for code, entry in cat.errors.items():
        details = _rewrite(entry["details"])
        error: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "code": {"const": code},
                "message": {"type": "string"},
                "details": details,
                "extensions": {"$ref": "#/components/schemas/Extensions"},
            },
            "required": ["code", "message", *(["details"] if details.get("required") else [])]
            + ["extensions"],
        }
        out[error_schema_name(entry)] = {
            "description": f"{entry['status']} {code}: {entry['when']}",
            "type": "object",
            "additionalProperties": False,
            "properties": {"error": error},
            "required": ["error"],
        }
    return out


def _op_errors(cat: Catalog, codes: list[str]) -> dict[str, Any]:
    """The error answers of an op, by HTTP status: each status names the codes it may carry
    (`x-spoke-error-codes`) and points at each code's own schema (`x-spoke-error-schemas`); its
    content schema is the generic envelope, so generated clients keep one error model."""
    by_status: dict[int, list[str]] = {}
    for code in [*cat.every_op, *codes]:
        by_status.setdefault(cat.errors[code]["status"], []).append(code)
    out: dict[str, dict[str, Any]] = {}
    for status in sorted(by_status):
        named = by_status[status]
        out[str(status)] = {
            "description": ", ".join(named),
            "x-spoke-error-codes": named,
            "x-spoke-error-schemas": {
                c: f"#/components/schemas/{error_schema_name(cat.errors[c])}" for c in named
            },
            **_json(ERROR),
        }
    return out


@lru_cache(maxsize=1)
def document() -> dict[str, Any]:
    cat = catalog()
    schemas = {name: _rewrite(schema) for name, schema in cat.components.items()}
    schemas.update(_error_schemas(cat))
    paths: dict[str, dict[str, Any]] = {}
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
                    **_op_errors(cat, spec.errors),
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
    schemas = _titled(schemas)
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
