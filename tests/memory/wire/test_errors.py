"""Errors are part of the contract: one table (memory/wire/schemas/errors.json) gives each code
its status, class name and details schema; each op's schema declares the codes it may answer.
From it come the provider's raiser classes and status table, the client's classes and the
OpenAPI error answers; the `api()` helper fails a test whose op answers an undeclared code."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import spoke_memory_client as smc

from memory.wire import error_codes, errors
from memory.wire.error_base import WireError
from memory.wire.openapi import document, error_schema_name
from memory.wire.validation import SCHEMA_DIR, catalog
from tests.conftest import Answer, check_answer

ROOT = Path(__file__).resolve().parents[3]
TABLE = json.loads((SCHEMA_DIR / "errors.json").read_text(encoding="utf-8"))


def test_one_raiser_class_per_code_with_its_status():
    assert set(errors.STATUS) == set(TABLE["errors"])
    for code, entry in TABLE["errors"].items():
        cls = getattr(errors, entry["name"])
        assert issubclass(cls, WireError)
        assert (cls.code, cls.http_status, errors.STATUS[code]) == (
            code,
            entry["status"],
            entry["status"],
        )
        assert errors.ERRORS[code] is cls


def test_a_raiser_renders_the_envelope_of_its_code():
    err = errors.RevisionConflict("expected_revision is stale.", current_revision=3)
    assert (err.code, err.status) == ("REVISION_CONFLICT", 409)
    assert err.envelope() == {
        "error": {
            "code": "REVISION_CONFLICT",
            "message": "expected_revision is stale.",
            "details": {"current_revision": 3},
            "extensions": {},
        }
    }
    bare = errors.SpaceFrozen("The space is frozen.")
    assert "details" not in bare.envelope()["error"]


def test_of_builds_the_class_of_a_code_held_as_data():
    err = WireError.of("IMPORT_STATE_CONFLICT", "no", state="discarded")
    assert type(err) is errors.ImportStateConflict and err.details == {"state": "discarded"}
    with pytest.raises(ValueError, match="unknown wire error code"):
        WireError.of("NOT_A_CODE", "no")


def test_the_client_has_the_same_class_per_code():
    for code, entry in TABLE["errors"].items():
        cls = smc.ERRORS[code]
        assert (cls.__name__, cls.code) == (entry["name"], code)
    err = smc.errors.error_from(409, {"error": {"code": "REVISION_CONFLICT", "message": "m"}})
    assert isinstance(err, smc.RevisionConflict) and err.status == 409


def test_every_op_declares_operations_codes_of_the_table():
    cat = catalog()
    assert set(cat.every_op) == {c for c, e in cat.errors.items() if e["layer"] == "dispatch"}
    for name, spec in cat.ops.items():
        assert set(spec.errors) <= set(cat.errors), name
        assert all(cat.errors[c]["layer"] == "operations" for c in spec.errors), name
        if spec.mutating:
            assert "IDEMPOTENCY_KEY_REUSED" in spec.errors, name


def test_openapi_lists_each_declared_code_under_its_status():
    doc = document()
    cat = catalog()
    for name, spec in cat.ops.items():
        responses = doc["paths"][f"/v1/ops/{name}"]["post"]["responses"]
        for code in [*cat.every_op, *spec.errors]:
            entry = cat.errors[code]
            answer = responses[str(entry["status"])]
            assert code in answer["x-spoke-error-codes"], (name, code)
            ref = answer["x-spoke-error-schemas"][code]
            assert ref == f"#/components/schemas/{error_schema_name(entry)}", (name, code)
            assert answer["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/ErrorEnvelope"
            }
        assert "default" not in responses
    conflict = doc["components"]["schemas"]["RevisionConflictError"]["properties"]["error"]
    assert conflict["properties"]["code"] == {"const": "REVISION_CONFLICT"}
    assert conflict["properties"]["details"]["required"] == ["current_revision"]


def test_no_error_is_raised_by_a_code_string():
    """`WireError("CODE", …)` is gone from the provider and the console: each error is its
    code's class (or `WireError.of` for a code that is data)."""
    found = []
    for path in [*(ROOT / "memory").rglob("*.py"), *(ROOT / "reviews").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "WireError"
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def _error(code: str, status: int, **details) -> Answer:
    body = {"error": {"code": code, "message": "m", "extensions": {}}}
    if details:
        body["error"]["details"] = details
    return Answer(status, body, {})


def test_the_api_helper_fails_an_undeclared_code():
    check_answer("memory.records.update", _error("REVISION_CONFLICT", 409, current_revision=2))
    check_answer("memory.records.get", _error("unauthenticated", 401))  # every op may
    with pytest.raises(AssertionError, match="does not declare"):
        check_answer("memory.records.get", _error("REVISION_CONFLICT", 409, current_revision=2))


def test_the_api_helper_fails_a_wrong_status_or_details():
    with pytest.raises(AssertionError):
        check_answer("memory.records.update", _error("REVISION_CONFLICT", 422, current_revision=2))
    with pytest.raises(AssertionError, match="details outside its schema"):
        check_answer("memory.records.update", _error("REVISION_CONFLICT", 409, revision=2))
    with pytest.raises(AssertionError, match="outside the table"):
        check_answer("memory.records.update", _error("TEAPOT", 409))


def test_the_api_helper_fails_an_answer_outside_the_op_schema():
    with pytest.raises(AssertionError, match="outside its answer schema"):
        check_answer("memory.records.get", Answer(200, {"record": {"record_id": "rec_1"}}, {}))


def test_generated_codes_module_is_the_table():
    assert error_codes.EVERY_OP == tuple(TABLE["every_op"])
