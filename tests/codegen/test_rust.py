"""tools/codegen/rust.py: the Rust crate's generated sources follow the schemas (the trait has a
method per op, SpokeError a variant per code, requests are closed and answers tolerant), and
`python -m tools.codegen.wire --check` covers them (test_wire.py runs the check itself)."""

from __future__ import annotations

import re

from tools.codegen import wire as gen_types


def _rendered() -> dict[str, str]:
    components, ops, endpoints = gen_types.load()
    out = gen_types.rust_outputs(components, ops, endpoints)
    return {path.name: text for path, text in out.items()}


def _struct(text: str, name: str) -> str:
    found = re.search(rf"((?:#\[[^\n]*\]\n)*)pub struct {name} \{{", text)
    assert found, name
    return found.group(0)


def test_the_crate_sources_are_generated_and_up_to_date():
    rendered = _rendered()
    assert set(rendered) == {"types.rs", "port.rs", "errors.rs"}
    for name, text in rendered.items():
        assert (gen_types.RUST_SRC / name).read_text(encoding="utf-8") == text, name
    assert _rendered() == rendered, "the output is deterministic"


def test_the_trait_has_one_method_per_op_and_the_client_implements_each():
    _, ops, _ = gen_types.load()
    port = _rendered()["port.rs"]
    trait = port[port.index("pub trait MemoryPort") : port.index("impl MemoryPort<Token>")]
    methods = re.findall(r"^    fn (\w+)\(\n        &self,\n        principal: &P,\n", trait, re.M)
    assert methods == [*(gen_types.op_method(n) for n in ops), "receipts_wait"]
    implemented = re.findall(r'self\.call\(principal, "([a-z.]+)", request\)', port)
    assert implemented == list(ops)
    for paged in gen_types.PAGED_ITEMS:
        assert f"fn {paged.split('.')[1]}_iter<'a>(" in trait


def test_a_variant_per_wire_code():
    errors = _rendered()["errors.rs"]
    from tools.codegen import typescript as gen_ts

    table = gen_ts.error_table(gen_types.SCHEMAS)
    for row in table:
        assert f"    {row.name}(Box<ErrorInfo>),\n" in errors, row.code
        assert f'            "{row.code}" => Self::{row.name}(info),' in errors
    assert "pub struct RevisionConflictDetails {" in errors


def test_requests_refuse_unknown_members_and_answers_do_not():
    types = _rendered()["types.rs"]
    assert "deny_unknown_fields" in _struct(types, "RecordsCreateRequest")
    assert "deny_unknown_fields" in _struct(types, "RecallRequestQuery")  # reached from a request
    assert "deny_unknown_fields" not in _struct(types, "RecordsGetResponse")
    # Content is in requests and in answers: tolerant, an answer's extra member must not fail.
    assert "deny_unknown_fields" not in _struct(types, "Content")
    assert "deny_unknown_fields" not in _struct(types, "RetainedRecord")


def test_unions_and_optional_members():
    types = _rendered()["types.rs"]
    assert '#[serde(tag = "scope")]\npub enum Placement {' in types
    assert "    Shared(PlacementShared)," in types
    assert '#[serde(tag = "action")]\npub enum ReviewDecision {' in types
    assert "pub type NextCursor = Option<Cursor>;" in types
    create = types[types.index("pub struct RecordsUpdateRequest {") :]
    create = create[: create.index("\n}\n")]
    assert "    pub expected_revision: i64," in create
    assert (
        '    #[serde(default, skip_serializing_if = "Option::is_none")]\n'
        "    pub idempotency_key: Option<IdempotencyKey>," in create
    )
