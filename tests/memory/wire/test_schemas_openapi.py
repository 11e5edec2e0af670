"""The schemas are the contract: every op has a request and response schema, the OpenAPI document
is generated from them, validates as OpenAPI 3.1 and lists all 33 ops."""

import json
from pathlib import Path

from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from memory.flags import ALL_FLAGS
from memory.wire.canonical import canonical, content_bytes, digest
from memory.wire.validation import catalog

# The op list is read from the schemas folder (the single source of truth), never typed by hand:
# one file per op, named after it. docs/protocol.md#ops has 33 ops.
SCHEMA_OPS_DIR = Path(__file__).resolve().parents[3] / "memory" / "wire" / "schemas" / "ops"
SPEC_OPS = {p.stem for p in SCHEMA_OPS_DIR.glob("memory.*.json")}
TESTS_DIR = Path(__file__).resolve().parents[2]
PENDING_CAPABLE = {
    "memory.reflections.generate",
    "memory.exports.create",
    "memory.imports.stage",
    "memory.imports.activate",
}


def test_catalog_holds_exactly_the_33_ops_with_their_flags():
    ops = catalog().ops
    assert set(ops) == SPEC_OPS
    flags = {name: spec.flag for name, spec in ops.items()}
    assert {n for n, f in flags.items() if f == "spoke-memory-reflection"} == {
        "memory.reflections.state",
        "memory.reflections.list",
        "memory.reflections.generate",
    }
    assert {n for n, f in flags.items() if f == "spoke-memory-transfer"} == {
        "memory.exports.create",
        "memory.exports.get",
        "memory.imports.stage",
        "memory.imports.activate",
        "memory.imports.discard",
    }
    assert sum(1 for f in flags.values() if f == "spoke-memory") == 25


def test_every_schema_is_a_valid_2020_12_schema():
    cat = catalog()
    for schema in cat.components.values():
        Draft202012Validator.check_schema(schema)
    for spec in cat.ops.values():
        Draft202012Validator.check_schema(spec.request)
        Draft202012Validator.check_schema(spec.response)


def test_requests_are_closed_objects():
    for name, spec in catalog().ops.items():
        validator = spec.request_validator
        assert not validator.is_valid({"zz_unknown": 1}), name


def test_mutating_ops_answer_receipts():
    for name, spec in catalog().ops.items():
        if spec.mutating:
            assert spec.response == {"$ref": "urn:spoke-memory:schema:ReceiptResponse"}, name


def test_cognition_filter_only_on_the_five_ops():
    accepting = set()
    filt = {"require": [{"dimension": "type", "op": "eq", "value": "goal"}]}
    for name, spec in catalog().ops.items():
        props = spec.request.get("properties", {})
        if "cognition_filter" in props:
            accepting.add(name)
    assert accepting == {
        "memory.recall",
        "memory.records.list",
        "memory.reflections.state",
        "memory.reflections.list",
        "memory.reflections.generate",
    }
    assert catalog().component_validator("CognitionFilter").is_valid(filt)


def test_openapi_document_validates_and_lists_every_op(api):
    doc = api.raw("/v1/openapi.json", method="get").body
    validate(doc)
    listed = {p.removeprefix("/v1/ops/") for p in doc["paths"] if p.startswith("/v1/ops/")}
    assert listed == SPEC_OPS
    assert {"/v1/connect", "/v1/disconnect", "/v1/manifest", "/healthz", "/readyz"} <= set(
        doc["paths"]
    )


def test_canonical_json_is_rfc8785():
    assert canonical({"b": 1, "a": [True, None, 1.5e-7]}) == b'{"a":[true,null,1.5e-7],"b":1}'
    assert canonical({"é": "\u2028"}) == '{"é":"\u2028"}'.encode()
    assert digest({}) == "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"


def test_content_bytes_count_every_present_member():
    assert content_bytes({"text": "hi"}) == len(b'{"text":"hi"}')
    assert content_bytes({"text": "hi", "cognition": []}) == len(b'{"cognition":[],"text":"hi"}')


def test_every_op_in_the_contract_has_a_handler():
    from memory.ops.base import HANDLERS

    assert set(HANDLERS) == SPEC_OPS


def test_the_schemas_folder_holds_the_33_ops_each_complete():
    """Each op file names itself, its flag, whether it mutates, and a request and a response."""
    assert len(SPEC_OPS) == 33
    for name in SPEC_OPS:
        schema = json.loads((SCHEMA_OPS_DIR / f"{name}.json").read_text())
        assert schema["op"] == name
        assert schema["flag"] in ALL_FLAGS  # memory/flags.py: the one definition
        assert isinstance(schema["mutating"], bool)
        assert schema["request"]["type"] == "object"
        assert schema["response"]


def test_every_op_is_called_by_some_test():
    """An op without a test that calls it by name is not done (docs/architecture.md, "How to
    add an op"). Counts calls in the tests' source, outside this file."""
    here = Path(__file__).resolve()
    sources = "\n".join(p.read_text() for p in TESTS_DIR.rglob("test_*.py") if p.resolve() != here)
    untested = sorted(name for name in SPEC_OPS if f'"{name}"' not in sources)
    assert untested == []
